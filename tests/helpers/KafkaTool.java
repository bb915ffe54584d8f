/*
 * The Kafka client side of tests/helpers/real_servers.py: topic admin, produce and consume
 * against a real broker, with the kafka-clients jar of the broker's own class path (no Python
 * Kafka client). Compiled once per broker directory by real_servers.KafkaBroker.
 *
 *   KafkaTool BOOTSTRAP create-topic NAME PARTITIONS [exist-ok]
 *   KafkaTool BOOTSTRAP delete-topic NAME
 *   KafkaTool BOOTSTRAP topics                      one name a line
 *   KafkaTool BOOTSTRAP end-offsets TOPIC           "partition offset" a line
 *   KafkaTool BOOTSTRAP produce TOPIC               records on stdin, one a line:
 *       PARTITION|- <tab> KEY|- <tab> VALUE|- <tab> HEADERS|-
 *       key and value base64 of their UTF-8 text, "-" for null; HEADERS comma-separated
 *       NAME:VALUE pairs, both base64; "-" for none
 *   KafkaTool BOOTSTRAP consume MIN_RECORDS TIMEOUT_MS TOPIC [TOPIC ...]
 *       every record from the beginning of every partition, as the JSON lines of `kcat -C -J`;
 *       MIN_RECORDS -1: up to the end offsets at the start; else until that many have been
 *       read (exit 3 when the time runs out first, after printing what was read)
 */

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.io.BufferedReader;
import java.io.InputStreamReader;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class KafkaTool {
    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String command = args[1];
        switch (command) {
            case "create-topic" -> createTopic(bootstrap, args[2], Integer.parseInt(args[3]), args.length > 4);
            case "delete-topic" -> deleteTopic(bootstrap, args[2]);
            case "topics" -> topics(bootstrap);
            case "end-offsets" -> endOffsets(bootstrap, args[2]);
            case "produce" -> produce(bootstrap, args[2]);
            case "consume" -> System.exit(consume(bootstrap, Integer.parseInt(args[2]), Long.parseLong(args[3]),
                    List.of(args).subList(4, args.length)));
            default -> throw new IllegalArgumentException("unknown command " + command);
        }
    }

    private static Admin admin(String bootstrap) {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        return Admin.create(props);
    }

    private static void createTopic(String bootstrap, String name, int partitions, boolean existOk) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            try {
                admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get();
            } catch (ExecutionException e) {
                if (!(existOk && e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
            // Until the broker's metadata has every partition with its leader. Right after the
            // creation (or a deletion of the same name) the broker may not know the topic yet.
            for (int attempt = 0; attempt < 100; attempt++) {
                try {
                    var description = admin.describeTopics(List.of(name)).allTopicNames().get().get(name);
                    if (description.partitions().stream().allMatch(p -> p.leader() != null && !p.leader().isEmpty())) {
                        return;
                    }
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                        throw e;
                    }
                }
                Thread.sleep(100);
            }
        }
    }

    private static void deleteTopic(String bootstrap, String name) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            admin.deleteTopics(List.of(name)).all().get();
            for (int attempt = 0; attempt < 100 && admin.listTopics().names().get().contains(name); attempt++) {
                Thread.sleep(100);
            }
        }
    }

    private static void topics(String bootstrap) throws Exception {
        try (Admin admin = admin(bootstrap)) {
            admin.listTopics().names().get().stream().sorted().forEach(System.out::println);
        }
    }

    private static KafkaConsumer<byte[], byte[]> consumer(String bootstrap) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
        return new KafkaConsumer<>(props, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }

    /** The partitions of the topics that exist, with their leaders (the broker id, -1 if none). */
    private static Map<TopicPartition, Integer> partitions(Admin admin, List<String> topics) throws Exception {
        Set<String> existing = admin.listTopics().names().get();
        List<String> found = topics.stream().filter(existing::contains).toList();
        Map<TopicPartition, Integer> leaders = new HashMap<>();
        try {
            admin.describeTopics(found).allTopicNames().get().forEach((name, description) ->
                    description.partitions().forEach(p -> leaders.put(new TopicPartition(name, p.partition()),
                            p.leader() == null ? -1 : p.leader().id())));
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                throw e;
            }
        }
        return leaders;
    }

    private static void endOffsets(String bootstrap, String topic) throws Exception {
        try (Admin admin = admin(bootstrap); KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap)) {
            consumer.endOffsets(partitions(admin, List.of(topic)).keySet()).entrySet().stream()
                    .sorted(Map.Entry.comparingByKey((a, b) -> Integer.compare(a.partition(), b.partition())))
                    .forEach(e -> System.out.println(e.getKey().partition() + " " + e.getValue()));
        }
    }

    private static byte[] decode(String field) {
        return field.equals("-") ? null : Base64.getDecoder().decode(field);
    }

    private static void produce(String bootstrap, String topic) throws Exception {
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        var reader = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (var producer = new KafkaProducer<>(props, new ByteArraySerializer(), new ByteArraySerializer())) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.isEmpty()) {
                    continue;
                }
                String[] fields = line.split("\t", -1);
                Integer partition = fields[0].equals("-") ? null : Integer.valueOf(fields[0]);
                List<Header> headers = new ArrayList<>();
                if (!fields[3].equals("-")) {
                    for (String pair : fields[3].split(",")) {
                        String[] nameValue = pair.split(":", -1);
                        headers.add(new RecordHeader(new String(decode(nameValue[0]), StandardCharsets.UTF_8),
                                decode(nameValue[1])));
                    }
                }
                // In order, one at a time: the offsets follow the order of the lines.
                producer.send(new ProducerRecord<>(topic, partition, null, decode(fields[1]), decode(fields[2]),
                        headers)).get();
            }
            producer.flush();
        }
    }

    private static int consume(String bootstrap, int minRecords, long timeoutMs, List<String> topics)
            throws Exception {
        long deadline = System.currentTimeMillis() + timeoutMs;
        try (Admin admin = admin(bootstrap); KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap)) {
            // A topic that does not exist has no records; while records are awaited, a topic or
            // partition that appears (created by its first record) is read too.
            Map<TopicPartition, Integer> leaders = partitions(admin, topics);
            consumer.assign(leaders.keySet());
            consumer.seekToBeginning(leaders.keySet());
            Map<TopicPartition, Long> ends = minRecords < 0 ? consumer.endOffsets(leaders.keySet()) : Map.of();
            long lookedAt = System.currentTimeMillis();
            int read = 0;
            while (true) {
                if (minRecords >= 0 && read >= minRecords) {
                    return 0;
                }
                if (minRecords < 0 && leaders.keySet().stream().allMatch(p -> consumer.position(p) >= ends.get(p))) {
                    return 0;
                }
                if (System.currentTimeMillis() > deadline) {
                    System.err.println("read " + read + " of " + minRecords + " records in " + timeoutMs + " ms");
                    return 3;
                }
                if (minRecords > 0 && System.currentTimeMillis() - lookedAt > 1000) {
                    Map<TopicPartition, Integer> now = partitions(admin, topics);
                    List<TopicPartition> added = now.keySet().stream().filter(p -> !leaders.containsKey(p)).toList();
                    if (!added.isEmpty()) {
                        leaders.putAll(now);
                        consumer.assign(leaders.keySet());
                        consumer.seekToBeginning(added);
                    }
                    lookedAt = System.currentTimeMillis();
                }
                if (leaders.isEmpty()) {
                    Thread.sleep(200);
                    continue;
                }
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println(kcatJson(record, leaders.getOrDefault(
                            new TopicPartition(record.topic(), record.partition()), -1)));
                    read++;
                }
                System.out.flush();
            }
        }
    }

    /** One record as `kcat -C -J` prints it. */
    private static String kcatJson(ConsumerRecord<byte[], byte[]> record, int broker) {
        StringBuilder out = new StringBuilder("{");
        out.append("\"topic\":").append(quote(record.topic()));
        out.append(",\"partition\":").append(record.partition());
        out.append(",\"offset\":").append(record.offset());
        String tstype = record.timestampType() == TimestampType.CREATE_TIME ? "create"
                : record.timestampType() == TimestampType.LOG_APPEND_TIME ? "logappend" : "none";
        out.append(",\"tstype\":").append(quote(tstype));
        out.append(",\"ts\":").append(record.timestamp());
        out.append(",\"broker\":").append(broker);
        Header[] headers = record.headers().toArray();
        if (headers.length > 0) {
            out.append(",\"headers\":[");
            for (int i = 0; i < headers.length; i++) {
                out.append(i == 0 ? "" : ",").append(quote(headers[i].key())).append(",").append(text(headers[i].value()));
            }
            out.append("]");
        }
        out.append(",\"key\":").append(text(record.key()));
        out.append(",\"payload\":").append(text(record.value()));
        return out.append("}").toString();
    }

    private static String text(byte[] bytes) {
        return bytes == null ? "null" : quote(new String(bytes, StandardCharsets.UTF_8));
    }

    private static String quote(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append("\"").toString();
    }
}
