package io.cairn.testkit;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Sends a POSIX signal to one process by its PID, with the system's {@code kill}: {@code STOP} pauses it (a GC pause,
 * a stalled VM, a hung client), {@code CONT} resumes it, {@code KILL} ends it where no {@link Process} handle exists.
 * The JDK's {@link ProcessHandle} can only destroy, so the tests that pause a broker or a client all come here.
 * Stateless and thread-safe.
 */
public final class Signals {

    private Signals() {
    }

    /**
     * Sends {@code SIG<signal>} to {@code pid} and waits for {@code kill} to exit.
     *
     * @param pid the process to signal
     * @param signal the signal's name without {@code SIG}, as {@code kill -<signal>} takes it: {@code STOP},
     *     {@code CONT}, {@code KILL}
     * @throws IllegalStateException when {@code kill} fails (no such process, no permission) or does not exit in 10 s
     */
    public static void send(long pid, String signal) {
        String command = "kill -" + signal + " " + pid;
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS)) {
                kill.destroyForcibly();
                throw new IllegalStateException(command + " did not exit in 10 s");
            }
            if (kill.exitValue() != 0) {
                throw new IllegalStateException(command + " failed with exit code " + kill.exitValue());
            }
        } catch (IOException e) {
            throw new IllegalStateException(command + " could not be started", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(command + " was interrupted", e);
        }
    }
}
