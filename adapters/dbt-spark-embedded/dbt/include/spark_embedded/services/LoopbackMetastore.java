// The lakehouse's Hive metastore service: the metastore handler of the Hive 2.3 jars that
// ship with pyspark, served over Thrift on 127.0.0.1 only.
//
// Hive 2.3's own `HiveMetaStore` main binds every network interface and has no setting to
// change that; this program builds the same handler (HiveMetaStore.newRetryingHMSHandler) and
// serves it on a loopback socket. Its settings come as JVM system properties, which HiveConf
// reads (javax.jdo.option.ConnectionURL: the Derby database under the lakehouse directory,
// hive.metastore.warehouse.dir, ...). Compiled into the jar cache by set-up and started by
// dbt/adapters/spark_embedded/services.py (metastore_jar, metastore_command), it prints
// `listening on 127.0.0.1:<port>` once it accepts clients, and exits by itself after
// `idle minutes` without any connected client.
//
//     java -cp '<its jar>:<pyspark>/jars/*' [-D...] LoopbackMetastore <port, 0: any free one> <idle minutes>

import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.server.ServerContext;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TServerEventHandler;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportFactory;

public class LoopbackMetastore {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        long idleMillis = Long.parseLong(args[1]) * 60_000L;
        HiveConf conf = new HiveConf();
        ThriftHiveMetastore.Iface handler = HiveMetaStore.newRetryingHMSHandler("cdc-metastore", conf, false);
        TServerSocket socket = new TServerSocket(new InetSocketAddress("127.0.0.1", port));
        TServer server = new TThreadPoolServer(
            new TThreadPoolServer.Args(socket)
                .processor(new ThriftHiveMetastore.Processor<>(handler))
                .protocolFactory(new TBinaryProtocol.Factory())
                .transportFactory(new TTransportFactory())
                .minWorkerThreads(4)
                .maxWorkerThreads(500));

        AtomicInteger clients = new AtomicInteger();
        AtomicLong idleSince = new AtomicLong(System.currentTimeMillis());
        server.setServerEventHandler(new TServerEventHandler() {
            public void preServe() {
                System.out.println("listening on 127.0.0.1:" + socket.getServerSocket().getLocalPort());
                System.out.flush();
            }

            public ServerContext createContext(TProtocol input, TProtocol output) {
                clients.incrementAndGet();
                return null;
            }

            public void deleteContext(ServerContext context, TProtocol input, TProtocol output) {
                if (clients.decrementAndGet() == 0) {
                    idleSince.set(System.currentTimeMillis());
                }
            }

            public void processContext(ServerContext context, TTransport input, TTransport output) {
            }
        });

        Thread watcher = new Thread(() -> {
            while (true) {
                try {
                    Thread.sleep(15_000);
                } catch (InterruptedException e) {
                    return;
                }
                if (idleMillis > 0 && clients.get() == 0
                        && System.currentTimeMillis() - idleSince.get() > idleMillis) {
                    System.out.println("no client for " + idleMillis / 60_000 + " minute(s): stopping");
                    System.out.flush();
                    System.exit(0);
                }
            }
        }, "idle-watcher");
        watcher.setDaemon(true);
        watcher.start();
        server.serve();
    }
}
