package io.cairn.log.recovery;

import io.cairn.log.AppendOrigin;
import io.cairn.log.LogAppendInfo;
import io.cairn.log.LogConfig;
import io.cairn.log.LogEnvironment;
import io.cairn.log.PartitionLog;
import io.cairn.log.Time;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Random;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.SimpleRecord;

/**
 * The child process of {@link CrashRecoveryIT}: opens the log as after a crash, then appends forever in durable
 * mode and prints {@code ACK <offset> <value>} for every record of every append that returned, until it is killed.
 */
public final class CrashWriter {

    private CrashWriter() {
    }

    /** Config shared with the test. */
    static LogConfig config() {
        return LogConfig.builder().durable(true).segmentBytes(16 * 1024).indexIntervalBytes(256)
            .segmentIndexBytes(8 * 1024).build();
    }

    public static void main(String[] args) {
        Path dir = Path.of(args[0]);
        String tag = args[1];
        PartitionLog log = PartitionLog.open(dir, config(), LogEnvironment.of(Time.SYSTEM), false);
        System.out.println("READY " + log.logEndOffset());
        System.out.flush();
        Random random = new Random();
        Compression[] codecs = {Compression.NONE, Compression.gzip().build(), Compression.lz4().build()};
        for (long n = 0; ; n++) {
            int count = 1 + random.nextInt(3);
            SimpleRecord[] records = new SimpleRecord[count];
            String[] values = new String[count];
            for (int i = 0; i < count; i++) {
                values[i] = tag + "-" + n + "-" + i + "-" + "p".repeat(random.nextInt(200));
                records[i] = new SimpleRecord(System.currentTimeMillis(), null,
                    values[i].getBytes(StandardCharsets.UTF_8));
            }
            ByteBuffer batch = MemoryRecords.withRecords(codecs[(int) (n % codecs.length)], records).buffer();
            LogAppendInfo info = log.appendAsLeader(batch, 1, AppendOrigin.CLIENT);
            StringBuilder acks = new StringBuilder();
            for (int i = 0; i < count; i++) {
                acks.append("ACK ").append(info.firstOffset() + i).append(' ').append(values[i]).append('\n');
            }
            System.out.print(acks);
            System.out.flush();
        }
    }
}
