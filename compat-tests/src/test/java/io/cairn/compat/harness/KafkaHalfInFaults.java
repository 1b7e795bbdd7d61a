package io.cairn.compat.harness;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A slow differential scenario, run once per {@link io.cairn.testkit.BrokerKind} of {@link SlowKinds#kinds()}: in
 * place of {@code @ParameterizedTest @MethodSource("kinds")} on a method taking the kind. {@code mvn verify} runs its
 * Cairn half; {@code mvn verify -Pfaults} selects it by the tag {@value #TAG} and runs its Kafka half; run alone (an
 * IDE, {@code -Dcairn.slow.kinds=}) it runs both. A method taking more than the kind carries {@code @Tag(TAG)} with its
 * own {@code @ParameterizedTest} and a source that draws the kinds from {@link SlowKinds#kinds()}.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Tag(KafkaHalfInFaults.TAG)
@ParameterizedTest
@MethodSource("io.cairn.compat.harness.SlowKinds#kinds")
public @interface KafkaHalfInFaults {

    /** The JUnit tag the {@code faults} profile includes. */
    String TAG = "kafka-half";
}
