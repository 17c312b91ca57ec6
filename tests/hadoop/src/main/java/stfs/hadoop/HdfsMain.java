package stfs.hadoop;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;

/**
 * A real HDFS for stfs's integration tests: a MiniDFSCluster (namenode(s) and one datanode in
 * this JVM, real WebHDFS) on DIR, started by scripts/hadoop.sh.
 *
 * <pre>
 *   HdfsMain DIR [plain|ha]
 * </pre>
 *
 * When the cluster is up it writes DIR/ready (atomically) with key=value lines: rpc=, http=
 * (the active namenode's ports), nn0_http=, nn1_http=, nn0_rpc=, nn1_rpc= (HA), dn_http=,
 * nameservice= (HA). It then polls DIR/cmd: a line "active N" makes namenode N the active one
 * (the other one standby; "active N GAP_MS" leaves none active for GAP_MS
 * first) and is answered by DIR/cmd.done holding the same line; "stop" shuts
 * the cluster down. SIGTERM shuts it down too.
 */
public final class HdfsMain {
    private HdfsMain() {}

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: HdfsMain DIR [plain|ha]");
            System.exit(2);
        }
        File dir = new File(args[0]).getAbsoluteFile();
        boolean ha = args.length > 1 && args[1].equals("ha");
        Configuration conf = new Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(dir, "data").getPath());
        conf.setBoolean("dfs.webhdfs.enabled", true);
        conf.setBoolean(DFSConfigKeys.DFS_PERMISSIONS_ENABLED_KEY, true);
        conf.set("hadoop.http.staticuser.user", "stfs");
        conf.setInt(DFSConfigKeys.DFS_REPLICATION_KEY, 1);
        conf.setLong(DFSConfigKeys.DFS_BLOCK_SIZE_KEY, 1024 * 1024);
        conf.setInt(DFSConfigKeys.DFS_NAMENODE_MIN_BLOCK_SIZE_KEY, 1024);
        conf.setInt(DFSConfigKeys.DFS_LIST_LIMIT, 1000);
        String limit = System.getenv("STFS_HDFS_LIST_LIMIT");
        if (limit != null && !limit.isEmpty())
            conf.setInt(DFSConfigKeys.DFS_LIST_LIMIT, Integer.parseInt(limit));
        // MiniDFSCluster sets fs.defaultFS itself; no superuser checks for the test user
        conf.set("dfs.permissions.superusergroup", "stfs");

        MiniDFSCluster.Builder b = new MiniDFSCluster.Builder(conf).numDataNodes(1).format(true);
        String ns = null;
        if (ha) {
            // builder ports are ignored with a topology: ports 0 per namenode
            MiniDFSNNTopology topo = MiniDFSNNTopology.simpleHATopology();
            ns = topo.getNameservices().get(0).getId();
            b.nnTopology(topo);
        }
        MiniDFSCluster cluster = b.build();
        Runtime.getRuntime().addShutdownHook(new Thread(cluster::shutdown));
        if (ha) {
            cluster.transitionToActive(0);
        }
        cluster.waitActive();
        cluster.getFileSystem(0).setPermission(new org.apache.hadoop.fs.Path("/"),
                new org.apache.hadoop.fs.permission.FsPermission((short) 0777));

        StringBuilder r = new StringBuilder();
        r.append("rpc=").append(cluster.getNameNode(0).getNameNodeAddress().getPort()).append('\n');
        r.append("http=").append(cluster.getNameNode(0).getHttpAddress().getPort()).append('\n');
        int nns = cluster.getNumNameNodes();
        for (int i = 0; i < nns; i++) {
            r.append("nn").append(i).append("_rpc=")
                    .append(cluster.getNameNode(i).getNameNodeAddress().getPort()).append('\n');
            r.append("nn").append(i).append("_http=")
                    .append(cluster.getNameNode(i).getHttpAddress().getPort()).append('\n');
        }
        r.append("dn_http=").append(cluster.getDataNodes().get(0).getInfoPort()).append('\n');
        if (ha) {
            r.append("nameservice=").append(ns).append('\n');
        }
        r.append("pid=").append(ProcessHandle.current().pid()).append('\n');
        Path tmp = new File(dir, "ready.tmp").toPath();
        Files.write(tmp, r.toString().getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, new File(dir, "ready").toPath(), StandardCopyOption.ATOMIC_MOVE);

        Path cmd = new File(dir, "cmd").toPath();
        for (;;) {
            Thread.sleep(100);
            if (!Files.exists(cmd))
                continue;
            List<String> lines = Files.readAllLines(cmd, StandardCharsets.UTF_8);
            Files.delete(cmd);
            for (String line : lines) {
                String[] w = line.trim().split("\\s+");
                if (w[0].equals("stop")) {
                    cluster.shutdown();
                    System.exit(0);
                }
                if (w[0].equals("active") && w.length >= 2) {
                    // "active N [GAP_MS]": no namenode is active for GAP_MS, as
                    // in a real failover
                    int n = Integer.parseInt(w[1]);
                    long gap = w.length > 2 ? Long.parseLong(w[2]) : 0;
                    for (int i = 0; i < nns; i++)
                        if (i != n && cluster.getNameNode(i).isActiveState())
                            cluster.transitionToStandby(i);
                    Thread.sleep(gap);
                    cluster.transitionToActive(n);
                }
                Path done = new File(dir, "cmd.done.tmp").toPath();
                Files.write(done, (line.trim() + "\n").getBytes(StandardCharsets.UTF_8));
                Files.move(done, new File(dir, "cmd.done").toPath(),
                        StandardCopyOption.ATOMIC_MOVE);
            }
        }
    }
}
