package stfs.hadoop;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.MiniDFSNNTopology;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * A real HDFS for stfs's integration tests: a MiniDFSCluster (namenode(s) and one datanode in
 * this JVM, real WebHDFS) on DIR, started by scripts/hadoop.sh.
 *
 * <pre>
 *   HdfsMain DIR [plain|ha|krb|tls]
 * </pre>
 *
 * tls: WebHDFS over HTTPS only (dfs.http.policy HTTPS_ONLY) on the namenode
 * and the datanode, with the PKCS12 keystore $STFS_HDFS_KEYSTORE (password
 * $STFS_HDFS_KEYSTORE_PASS) that the test made; DIR/conf/ssl-server.xml is
 * written here and read from the classpath (scripts/hadoop.sh puts DIR/conf
 * on it).  The ready file then has https=, nnN_https= and dn_https= (the
 * port a 307 of OPEN points at) instead of the http ports.
 *
 * krb: a MiniKdc (realm EXAMPLE.COM) beside a kerberized cluster (SPNEGO on
 * WebHDFS with HTTP/localhost, hdfs/localhost for the daemons, block access
 * tokens).  The ready file then also has krb5conf=, realm=, principal= (the
 * user principal, stfs@REALM), keytab= (its keytab), wrong_keytab= (a keytab
 * of the same principal holding a key the KDC no longer has: the key was
 * changed after it was exported), other_keytab= (a keytab of another
 * principal only, intruder@REALM).  Everything is made here, under DIR/krb.
 *
 * When the cluster is up it writes DIR/ready (atomically) with key=value lines: rpc=, http=
 * (the active namenode's ports), nn0_http=, nn1_http=, nn0_rpc=, nn1_rpc= (HA), dn_http=,
 * nameservice= (HA). It then polls DIR/cmd: a line "active N" makes namenode N the active one
 * (the other one standby; "active N GAP_MS" leaves none active for GAP_MS
 * first) and is answered by DIR/cmd.done holding the same line; "stop" shuts
 * the cluster down. SIGTERM shuts it down too. "put LOCALDIR HDFSDIR" copies a
 * local tree in (owned by user stfs) and "files HDFSDIR" writes DIR/cmd.out
 * with "relpath size" of every file below HDFSDIR; both ask HDFS itself as the
 * cluster's own (superuser) client, which works on the kerberized cluster too.
 * "tokens" writes DIR/cmd.out with every delegation token the active namenode
 * holds, as the urlString a WebHDFS client got (krb: for the tests that look
 * for the daemon's token where it must not be).  A command that throws is
 * answered all the same, with DIR/cmd.err holding the line and the exception.
 */
public final class HdfsMain {
    private HdfsMain() {}

    public static void main(String[] args) {
        // a cluster that fails to start leaves non-daemon threads behind:
        // end the JVM, so that hadoop.sh start fails at once, not after its wait
        try {
            run(args);
        } catch (Throwable t) {
            t.printStackTrace();
            System.exit(1);
        }
    }

    private static void run(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: HdfsMain DIR [plain|ha|krb|tls]");
            System.exit(2);
        }
        File dir = new File(args[0]).getAbsoluteFile();
        boolean ha = args.length > 1 && args[1].equals("ha");
        boolean krb = args.length > 1 && args[1].equals("krb");
        boolean tls = args.length > 1 && args[1].equals("tls");
        Configuration conf = new Configuration();
        StringBuilder r = new StringBuilder();
        if (krb)
            kerberize(dir, conf, r);
        if (tls)
            httpsOnly(dir, conf);
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
        if (krb) {
            // a secure datanode without SASL binds the configured ports
            // itself (SecureDataNodeStarter) and refuses port 0
            conf.set(DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY, "127.0.0.1:" + freePort());
            conf.set(DFSConfigKeys.DFS_DATANODE_HTTP_ADDRESS_KEY, "127.0.0.1:" + freePort());
            conf.set(DFSConfigKeys.DFS_DATANODE_IPC_ADDRESS_KEY, "127.0.0.1:" + freePort());
            b.checkDataNodeAddrConfig(true);
        }
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

        r.append("rpc=").append(cluster.getNameNode(0).getNameNodeAddress().getPort()).append('\n');
        String web = tls ? "https" : "http";
        r.append(web).append('=').append(webPort(cluster, 0, tls)).append('\n');
        int nns = cluster.getNumNameNodes();
        for (int i = 0; i < nns; i++) {
            r.append("nn").append(i).append("_rpc=")
                    .append(cluster.getNameNode(i).getNameNodeAddress().getPort()).append('\n');
            r.append("nn").append(i).append('_').append(web).append('=')
                    .append(webPort(cluster, i, tls)).append('\n');
        }
        r.append("dn_").append(web).append('=')
                .append(tls ? cluster.getDataNodes().get(0).getInfoSecurePort()
                            : cluster.getDataNodes().get(0).getInfoPort())
                .append('\n');
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
                try {
                    command(cluster, dir, nns, krb, line);
                } catch (Exception e) {
                    // answered all the same: the shell side fails at once
                    // with the reason instead of waiting for its deadline
                    e.printStackTrace();
                    Path err = new File(dir, "cmd.err.tmp").toPath();
                    Files.write(err, (line.trim() + ": " + e + "\n")
                            .getBytes(StandardCharsets.UTF_8));
                    Files.move(err, new File(dir, "cmd.err").toPath(),
                            StandardCopyOption.ATOMIC_MOVE);
                }
                Path done = new File(dir, "cmd.done.tmp").toPath();
                Files.write(done, (line.trim() + "\n").getBytes(StandardCharsets.UTF_8));
                Files.move(done, new File(dir, "cmd.done").toPath(),
                        StandardCopyOption.ATOMIC_MOVE);
            }
        }
    }

    /* One command line of DIR/cmd (see the class comment). */
    private static void command(MiniDFSCluster cluster, File dir, int nns, boolean krb,
            String line) throws Exception {
        // the JVM's own ticket lives STFS_KRB_TICKET_S: a new one from
        // the keytab once it nears its end (relogin allowed at any
        // time, see kerberize)
        if (krb)
            UserGroupInformation.getLoginUser().checkTGTAndReloginFromKeytab();
        String[] w = line.trim().split("\\s+");
        if (w[0].equals("stop")) {
            cluster.shutdown();
            System.exit(0);
        }
        if (w[0].equals("put") && w.length == 3) {
            FileSystem fs = cluster.getFileSystem(activeIndex(cluster));
            org.apache.hadoop.fs.Path dst = new org.apache.hadoop.fs.Path(w[2]);
            fs.mkdirs(dst.getParent());
            fs.copyFromLocalFile(false, true, new org.apache.hadoop.fs.Path(w[1]), dst);
            chownAll(fs, dst);
        }
        if (w[0].equals("files") && w.length == 2) {
            FileSystem fs = cluster.getFileSystem(activeIndex(cluster));
            org.apache.hadoop.fs.Path base = fs.makeQualified(
                    new org.apache.hadoop.fs.Path(w[1]));
            StringBuilder o = new StringBuilder();
            if (fs.exists(base)) {
                RemoteIterator<LocatedFileStatus> it = fs.listFiles(base, true);
                String pre = base.toUri().getPath() + "/";
                while (it.hasNext()) {
                    LocatedFileStatus st = it.next();
                    String p = st.getPath().toUri().getPath();
                    o.append(p.startsWith(pre) ? p.substring(pre.length()) : p)
                            .append(' ').append(st.getLen()).append('\n');
                }
            } else {
                o.append("absent\n");
            }
            Path out = new File(dir, "cmd.out.tmp").toPath();
            Files.write(out, o.toString().getBytes(StandardCharsets.UTF_8));
            Files.move(out, new File(dir, "cmd.out").toPath(),
                    StandardCopyOption.ATOMIC_MOVE);
        }
        if (w[0].equals("tokens")) {
            int a = activeIndex(cluster);
            org.apache.hadoop.hdfs.security.token.delegation.DelegationTokenSecretManager sm =
                    org.apache.hadoop.hdfs.server.namenode.NameNodeAdapter
                            .getDtSecretManager(cluster.getNamesystem(a));
            java.lang.reflect.Field cf = org.apache.hadoop.security.token.delegation
                    .AbstractDelegationTokenSecretManager.class
                    .getDeclaredField("currentTokens");
            cf.setAccessible(true);
            StringBuilder o = new StringBuilder();
            String svc = "127.0.0.1:"
                    + cluster.getNameNode(a).getNameNodeAddress().getPort();
            synchronized (sm) {
                for (Object k : ((java.util.Map<?, ?>) cf.get(sm)).keySet()) {
                    org.apache.hadoop.hdfs.security.token.delegation
                            .DelegationTokenIdentifier id =
                            (org.apache.hadoop.hdfs.security.token.delegation
                                    .DelegationTokenIdentifier) k;
                    org.apache.hadoop.security.token.Token<?> t =
                            new org.apache.hadoop.security.token.Token<>(
                                    id.getBytes(), sm.retrievePassword(id),
                                    new org.apache.hadoop.io.Text("WEBHDFS delegation"),
                                    new org.apache.hadoop.io.Text(svc));
                    o.append(t.encodeToUrlString()).append('\n');
                }
            }
            Path out = new File(dir, "cmd.out.tmp").toPath();
            Files.write(out, o.toString().getBytes(StandardCharsets.UTF_8));
            Files.move(out, new File(dir, "cmd.out").toPath(),
                    StandardCopyOption.ATOMIC_MOVE);
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
    }

    private static int freePort() throws Exception {
        try (java.net.ServerSocket ss = new java.net.ServerSocket(0)) {
            return ss.getLocalPort();
        }
    }

    private static int webPort(MiniDFSCluster cluster, int i, boolean tls) {
        return tls ? cluster.getNameNode(i).getHttpsAddress().getPort()
                   : cluster.getNameNode(i).getHttpAddress().getPort();
    }

    /**
     * WebHDFS over HTTPS only, on the keystore the test made (see the class comment): the
     * namenode's and the datanode's web servers both read DIR/conf/ssl-server.xml from the
     * classpath.
     */
    private static void httpsOnly(File dir, Configuration conf) throws Exception {
        String ks = System.getenv("STFS_HDFS_KEYSTORE");
        String pass = System.getenv("STFS_HDFS_KEYSTORE_PASS");
        if (ks == null || ks.isEmpty() || pass == null || pass.isEmpty())
            throw new IllegalArgumentException(
                    "tls needs STFS_HDFS_KEYSTORE and STFS_HDFS_KEYSTORE_PASS");
        File cd = new File(dir, "conf");
        cd.mkdirs();
        Configuration ssl = new Configuration(false);
        ssl.set("ssl.server.keystore.location", new File(ks).getAbsolutePath());
        ssl.set("ssl.server.keystore.type", "pkcs12");
        ssl.set("ssl.server.keystore.password", pass);
        ssl.set("ssl.server.keystore.keypassword", pass);
        try (java.io.OutputStream o = Files.newOutputStream(new File(cd, "ssl-server.xml").toPath())) {
            ssl.writeXml(o);
        }
        conf.set(DFSConfigKeys.DFS_HTTP_POLICY_KEY, "HTTPS_ONLY");
        conf.set(DFSConfigKeys.DFS_NAMENODE_HTTPS_ADDRESS_KEY, "127.0.0.1:0");
        conf.set(DFSConfigKeys.DFS_DATANODE_HTTPS_ADDRESS_KEY, "127.0.0.1:0");
    }

    private static int activeIndex(MiniDFSCluster cluster) {
        for (int i = 0; i < cluster.getNumNameNodes(); i++)
            if (cluster.getNameNode(i).isActiveState())
                return i;
        return 0;
    }

    private static void chownAll(FileSystem fs, org.apache.hadoop.fs.Path p) throws Exception {
        fs.setOwner(p, "stfs", "stfs");
        if (fs.getFileStatus(p).isDirectory())
            for (org.apache.hadoop.fs.FileStatus st : fs.listStatus(p))
                chownAll(fs, st.getPath());
    }

    /**
     * A MiniKdc and the configuration of a kerberized cluster on it (see the class comment).
     * The JVM logs in as hdfs/localhost from its keytab; the cluster's daemons use it too.
     */
    private static void kerberize(File dir, Configuration conf, StringBuilder ready)
            throws Exception {
        File kd = new File(dir, "krb");
        kd.mkdirs();
        java.util.Properties kc = MiniKdc.createConf();
        kc.setProperty(MiniKdc.KDC_BIND_ADDRESS, "localhost");
        // STFS_KRB_TICKET_S: short tickets (in seconds, as Kerby reads it), so
        // that the tests see clients get new ones from their keytab
        String life = System.getenv("STFS_KRB_TICKET_S");
        kc.setProperty(MiniKdc.MAX_TICKET_LIFETIME,
                life != null && !life.isEmpty() ? life : "86400");
        MiniKdc kdc = new MiniKdc(kc, kd);
        kdc.start();
        Runtime.getRuntime().addShutdownHook(new Thread(kdc::stop));
        String realm = kdc.getRealm();
        File svc = new File(kd, "hdfs.keytab");
        File user = new File(kd, "stfs.keytab");
        File wrong = new File(kd, "stfs-wrong.keytab");
        File other = new File(kd, "intruder.keytab");
        kdc.createPrincipal(svc, "hdfs/localhost", "HTTP/localhost");
        // a keytab of stfs whose key the KDC then forgets: the principal is
        // made again with a new random key, exported to the real keytab
        kdc.createPrincipal(wrong, "stfs");
        java.lang.reflect.Field f = MiniKdc.class.getDeclaredField("simpleKdc");
        f.setAccessible(true);
        org.apache.kerby.kerberos.kerb.server.SimpleKdcServer skdc =
                (org.apache.kerby.kerberos.kerb.server.SimpleKdcServer) f.get(kdc);
        skdc.deletePrincipal("stfs@" + realm);
        kdc.createPrincipal(user, "stfs");
        kdc.createPrincipal(other, "intruder");

        String svcp = "hdfs/localhost@" + realm;
        String httpp = "HTTP/localhost@" + realm;
        conf.set("hadoop.security.authentication", "kerberos");
        conf.setBoolean("hadoop.security.authorization", true);
        conf.set(DFSConfigKeys.DFS_NAMENODE_KERBEROS_PRINCIPAL_KEY, svcp);
        conf.set(DFSConfigKeys.DFS_NAMENODE_KEYTAB_FILE_KEY, svc.getPath());
        conf.set(DFSConfigKeys.DFS_DATANODE_KERBEROS_PRINCIPAL_KEY, svcp);
        conf.set(DFSConfigKeys.DFS_DATANODE_KEYTAB_FILE_KEY, svc.getPath());
        conf.set(DFSConfigKeys.DFS_WEB_AUTHENTICATION_KERBEROS_PRINCIPAL_KEY, httpp);
        conf.set(DFSConfigKeys.DFS_WEB_AUTHENTICATION_KERBEROS_KEYTAB_KEY, svc.getPath());
        // WebHDFS's AuthFilter reads the hadoop.http.authentication.* keys
        // (default: simple) in Hadoop 3.5
        conf.set("hadoop.http.authentication.type", "kerberos");
        conf.set("hadoop.http.authentication.kerberos.principal", httpp);
        conf.set("hadoop.http.authentication.kerberos.keytab", svc.getPath());
        conf.setBoolean("hadoop.http.authentication.simple.anonymous.allowed", false);
        conf.setBoolean(DFSConfigKeys.DFS_BLOCK_ACCESS_TOKEN_ENABLE_KEY, true);
        conf.setBoolean("ignore.secure.ports.for.testing", true);
        conf.set("hadoop.proxyuser.hdfs.hosts", "*");
        conf.set("hadoop.proxyuser.hdfs.groups", "*");
        // short delegation tokens, so that the tests see renewals: a token
        // renewed every STFS_HDFS_TOKEN_RENEW_MS lives at most 10 renewals
        String renew = System.getenv("STFS_HDFS_TOKEN_RENEW_MS");
        if (renew != null && !renew.isEmpty()) {
            long ms = Long.parseLong(renew);
            conf.setLong(DFSConfigKeys.DFS_NAMENODE_DELEGATION_TOKEN_RENEW_INTERVAL_KEY, ms);
            conf.setLong(DFSConfigKeys.DFS_NAMENODE_DELEGATION_TOKEN_MAX_LIFETIME_KEY,
                    10 * ms);
        }
        // tickets may live 15 s here: let a relogin happen whenever one
        // nears its end (the default refuses one within 60 s of the last)
        conf.setLong("hadoop.kerberos.min.seconds.before.relogin", 1);
        UserGroupInformation.setConfiguration(conf);
        UserGroupInformation.loginUserFromKeytab(svcp, svc.getPath());

        ready.append("realm=").append(realm).append('\n');
        ready.append("krb5conf=").append(kdc.getKrb5conf().getPath()).append('\n');
        ready.append("kdc_port=").append(kdc.getPort()).append('\n');
        ready.append("principal=stfs@").append(realm).append('\n');
        ready.append("keytab=").append(user.getPath()).append('\n');
        ready.append("wrong_keytab=").append(wrong.getPath()).append('\n');
        ready.append("other_keytab=").append(other.getPath()).append('\n');
    }
}
