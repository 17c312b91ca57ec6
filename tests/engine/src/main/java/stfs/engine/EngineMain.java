/*
 * A real Apache SeaTunnel Zeta node, in-process, for stfs's integration tests (README "The real
 * engine in the tests"). Usage:
 *
 *   java ... stfs.engine.EngineMain <state-dir> <cluster-name> [port]
 *
 * <state-dir>/checkpoint/   checkpoint storage (plugin "hdfs", fs.defaultFS file:///, max-retained 3)
 * <state-dir>/imap/         IMap persistence (FileMapStoreFactory, type hdfs, file:///, LAZY)
 * <state-dir>/ready         written once the node serves REST: key=value lines (port, rest, pid)
 *
 * The REST API is the one the engine version offers; 2.3.8 has no Jetty server, its API is the
 * Hazelcast member port's /hazelcast/rest/maps/... ("rest" in the ready file is that base URL).
 * SIGTERM shuts the node down (the JVM's shutdown hook), leaving storage and IMap files in place.
 */
package stfs.engine;

import com.hazelcast.config.Config;
import com.hazelcast.config.InterfacesConfig;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MapStoreConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.instance.impl.HazelcastInstanceImpl;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.ServerSocket;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import org.apache.seatunnel.engine.common.config.ConfigProvider;
import org.apache.seatunnel.engine.common.config.SeaTunnelConfig;
import org.apache.seatunnel.engine.common.config.server.CheckpointConfig;
import org.apache.seatunnel.engine.common.config.server.CheckpointStorageConfig;
import org.apache.seatunnel.engine.server.SeaTunnelServerStarter;

public final class EngineMain {
    private EngineMain() {}

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static SeaTunnelConfig config(Path dir, String cluster, int port) throws IOException {
        SeaTunnelConfig cfg = ConfigProvider.locateAndGetSeaTunnelConfig();
        Config hz = cfg.getHazelcastConfig();
        hz.setClusterName(cluster);
        hz.setProperty("hazelcast.phone.home.enabled", "false");
        hz.setProperty("hazelcast.shutdownhook.policy", "GRACEFUL");
        NetworkConfig net = hz.getNetworkConfig();
        net.setPort(port).setPortAutoIncrement(false);
        net.setPublicAddress("127.0.0.1:" + port);
        InterfacesConfig ifs = net.getInterfaces();
        ifs.setEnabled(true).clear();
        ifs.addInterface("127.0.0.1");
        JoinConfig join = net.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true).clear().addMember("127.0.0.1:" + port);
        /* -Dstfs.members=P1,P2: one cluster of several members on loopback
           (test_engine_failover.sh); each member lists them all */
        String members = System.getProperty("stfs.members", "");
        for (String m : members.split(","))
            if (!m.isEmpty())
                join.getTcpIpConfig().addMember("127.0.0.1:" + m.trim());

        /* -Dstfs.fs=hdfs://HOST:PORT: checkpoints and IMaps on that HDFS, under
           /seatunnel/checkpoint/ and /seatunnel/imap (test_hdfs_engine.sh) */
        String fs = System.getProperty("stfs.fs", "file:///");
        /* -Dstfs.shared=DIR: the members of one cluster share checkpoint and
           IMap storage (DIR/checkpoint, DIR/imap), as on a real deployment */
        String shared = System.getProperty("stfs.shared", "");
        if (!shared.isEmpty())
            dir = new File(shared).getAbsoluteFile().toPath();
        boolean remote = !fs.startsWith("file:");
        Properties p = new Properties();
        p.setProperty("type", "hdfs");
        p.setProperty("namespace", remote ? "/seatunnel/imap" : dir.resolve("imap").toString());
        p.setProperty("clusterName", cluster);
        p.setProperty("storage.type", "hdfs");
        p.setProperty("fs.defaultFS", fs);
        MapStoreConfig ms = new MapStoreConfig()
                .setEnabled(true)
                .setInitialLoadMode(MapStoreConfig.InitialLoadMode.LAZY)
                .setFactoryClassName(
                        "org.apache.seatunnel.engine.server.persistence.FileMapStoreFactory")
                .setProperties(p);
        /* -Dstfs.imap=false: no IMap persistence (as the shipped hazelcast.yaml) */
        if (!"false".equals(System.getProperty("stfs.imap")))
            hz.addMapConfig(new MapConfig("engine*").setMapStoreConfig(ms));

        CheckpointConfig ck = cfg.getEngineConfig().getCheckpointConfig();
        CheckpointStorageConfig st = ck.getStorage();
        st.setStorage("hdfs");
        st.setMaxRetainedCheckpoints(3);
        Map<String, String> pc = new HashMap<>();
        pc.put("namespace", remote ? "/seatunnel/checkpoint/"
                : dir.resolve("checkpoint").toString() + "/");
        pc.put("storage.type", "hdfs");
        pc.put("fs.defaultFS", fs);
        st.setStoragePluginConfig(pc);
        return cfg;
    }

    /* The REST API answers once the node has started its coordinator service. */
    private static boolean restUp(String base) {
        try {
            HttpURLConnection c = (HttpURLConnection) new URL(base + "/running-jobs").openConnection();
            c.setConnectTimeout(1000);
            c.setReadTimeout(2000);
            int code = c.getResponseCode();
            try (InputStream in = code < 400 ? c.getInputStream() : c.getErrorStream()) {
                if (in != null)
                    in.readAllBytes();
            }
            return code == 200;
        } catch (IOException e) {
            return false;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: EngineMain <state-dir> <cluster-name> [port]");
            System.exit(2);
        }
        Path dir = new File(args[0]).getAbsoluteFile().toPath();
        String cluster = args[1];
        int port = args.length > 2 ? Integer.parseInt(args[2]) : freePort();
        Files.createDirectories(dir.resolve("checkpoint"));
        Files.createDirectories(dir.resolve("imap"));
        Files.deleteIfExists(dir.resolve("ready"));

        HazelcastInstanceImpl node = SeaTunnelServerStarter.createHazelcastInstance(
                config(dir, cluster, port));
        String rest = "http://127.0.0.1:" + port + "/hazelcast/rest/maps";
        long deadline = System.currentTimeMillis() + 120_000;
        while (!restUp(rest)) {
            if (System.currentTimeMillis() > deadline) {
                System.err.println("stfs-engine: REST did not come up on " + rest);
                node.shutdown();
                System.exit(1);
            }
            Thread.sleep(200);
        }
        StringBuilder sb = new StringBuilder();
        sb.append("port=").append(port).append('\n');
        sb.append("rest=").append(rest).append('\n');
        sb.append("cluster=").append(cluster).append('\n');
        sb.append("pid=").append(ProcessHandle.current().pid()).append('\n');
        sb.append("checkpoint=").append(dir.resolve("checkpoint")).append('\n');
        sb.append("imap=").append(dir.resolve("imap")).append('\n');
        Path tmp = dir.resolve("ready.tmp");
        Files.write(tmp, sb.toString().getBytes(StandardCharsets.UTF_8));
        Files.move(tmp, dir.resolve("ready"), StandardCopyOption.ATOMIC_MOVE);
        System.out.println("stfs-engine: ready " + rest);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.deleteIfExists(dir.resolve("ready"));
            } catch (IOException e) {
                /* best effort */
            }
        }));
        Thread.currentThread().join();
    }
}
