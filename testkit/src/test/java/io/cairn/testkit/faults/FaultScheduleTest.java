package io.cairn.testkit.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class FaultScheduleTest {

    @Test
    void anEmptyKindListShouldDrawTheSeedsUsualSchedule() {
        // When
        FaultSchedule unrestricted = FaultSchedule.draw(4, 5, 3, List.of());

        // Then: seed 4 as the campaign has always drawn it
        assertThat(unrestricted).isEqualTo(FaultSchedule.draw(4, 5, 3));
        assertThat(unrestricted.faults()).extracting(FaultSchedule.Fault::name).containsExactly("bounce-follower",
                "kill-follower", "kill-controller", "pause-follower", "partition-controller");
    }

    @Test
    void restrictedKindsShouldBeTheOnlyOnesDrawn() {
        // When
        FaultSchedule schedule = FaultSchedule.draw(7, 40, 3, List.of("kill-controller", "pause-leader"));

        // Then
        assertThat(schedule.faults()).extracting(FaultSchedule.Fault::name)
                .containsOnly("kill-controller", "pause-leader");
        assertThat(schedule).isEqualTo(FaultSchedule.draw(7, 40, 3, List.of("kill-controller", "pause-leader")));
    }

    @Test
    void powerCutsShouldBeDrawnOnlyWhenNamed() {
        // When
        List<String> unrestricted = java.util.stream.LongStream.range(0, 200)
                .mapToObj(seed -> FaultSchedule.draw(seed, 5, 3))
                .flatMap(schedule -> schedule.faults().stream()).map(FaultSchedule.Fault::name).toList();
        FaultSchedule named = FaultSchedule.draw(7, 20, 3, List.of("power-leader", "power-follower"));

        // Then
        assertThat(unrestricted).noneMatch(name -> name.startsWith("power-"));
        assertThat(named.faults()).extracting(FaultSchedule.Fault::name)
                .containsOnly("power-leader", "power-follower");
    }

    @Test
    void anUnknownKindShouldBeRefused() {
        // When / Then
        assertThatThrownBy(() -> FaultSchedule.draw(1, 5, 3, List.of("kill-controller", "crash-leader")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("crash-leader");
    }
}
