package io.cairn.testkit;

import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * Runs a Kafka CLI tool's {@code main} in the test JVM, as {@link JavaTool} does in a child JVM, for tools with no
 * JVM-wide side effects (no shutdown hook, no standard input, no system property; {@link KafkaDistribution} names
 * them): a JVM start costs about a second of CPU per run on a small machine, a call a few milliseconds once the
 * classes are loaded.
 *
 * <p>What a process gives a tool is rebuilt for it: the tool's {@code main} runs on a thread of its own, and
 * {@code System.out}/{@code System.err} written from that thread (or from a thread it started) go to its own buffers
 * (other threads still reach the test JVM's streams); Kafka's {@code Exit.exit}/{@code Exit.halt} on those threads
 * end the run with that exit code, as the process would end, so what the tool prints after its first exit (a
 * {@code catch (Throwable)} around the exit) is dropped; an exception out of {@code main} prints
 * {@code Exception in thread "main"} and its stack trace to the tool's stderr and exits with 1, as the
 * {@code java} launcher does; a run outliving its timeout is interrupted and reported as a child JVM's is. On every
 * other thread {@code Exit} keeps Kafka's default (the JVM exits or halts). Unlike a child JVM, the tool's log lines
 * go to the test JVM's log, not to its stderr.
 *
 * <p>Thread-safe: runs may overlap; each has its own thread and buffers.
 */
final class InProcessTool {

    private static final Logger LOGGER = LogManager.getLogger(InProcessTool.class);
    private static final String EXIT_CLASS = "org.apache.kafka.common.utils.Exit";
    /** The run a thread prints for; inherited by the threads a tool starts. */
    private static final InheritableThreadLocal<Run> CURRENT = new InheritableThreadLocal<>();
    private static final Object LOCK = new Object();

    private static boolean exitInstalled;
    private static PrintStream out;
    private static PrintStream err;

    private InProcessTool() {
    }

    /**
     * Whether {@code mainClass} and Kafka's {@code Exit} are on this JVM's classpath and, for a Scala tool printing
     * through {@code scala.Console} ({@code scalaConsole}), whether that prints through {@code System.out} (it keeps
     * the stream it found at its first use, so it does once this class has routed the streams first).
     */
    static boolean available(String mainClass, boolean scalaConsole) {
        try {
            Class.forName(EXIT_CLASS, false, InProcessTool.class.getClassLoader());
            Class.forName(mainClass, false, InProcessTool.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
        if (!scalaConsole) {
            return true;
        }
        install();
        try {
            Class<?> console = Class.forName("scala.Console");
            return console.getMethod("out").invoke(null) == out && console.getMethod("err").invoke(null) == err;
        } catch (ReflectiveOperationException | LinkageError e) {
            return false;
        }
    }

    /** Runs {@code mainClass} with {@code args} to completion, or fails after {@code timeout}. */
    static JavaTool.Result run(String mainClass, List<String> args, Duration timeout) {
        Method main;
        try {
            main = Class.forName(mainClass).getMethod("main", String[].class);
        } catch (ClassNotFoundException | NoSuchMethodException e) {
            throw new IllegalStateException("No main method in " + mainClass, e);
        }
        install();
        Run run = new Run();
        long begin = System.nanoTime();
        Thread thread = new Thread(() -> {
            CURRENT.set(run);
            try {
                main.invoke(null, (Object) args.toArray(String[]::new));
                run.exit(0);
            } catch (InvocationTargetException e) {
                if (!(e.getCause() instanceof ToolExit)) {
                    run.err.print("Exception in thread \"main\" ");
                    e.getCause().printStackTrace(run.err);
                    run.exit(1);
                }
            } catch (ToolExit e) {
                // the run already holds the exit code
            } catch (IllegalAccessException e) {
                run.err.println(e);
                run.exit(1);
            } finally {
                run.done = true;
                CURRENT.remove();
            }
        }, "kafka-tool-" + mainClass.substring(mainClass.lastIndexOf('.') + 1));
        thread.setDaemon(true);
        thread.start();
        try {
            thread.join(timeout.toMillis());
        } catch (InterruptedException e) {
            thread.interrupt();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while running " + mainClass, e);
        }
        if (thread.isAlive()) {
            thread.interrupt();
            run.exit(-1);
            throw new IllegalStateException(mainClass + " " + args + " (in this JVM, thread " + thread.getName()
                    + ") did not finish within " + timeout.toSeconds() + " s and was interrupted; stdout:\n"
                    + run.out() + "\nstderr:\n" + run.err());
        }
        JavaTool.Result result = new JavaTool.Result(run.exitCode(), run.out(), run.err(),
                Duration.ofNanos(System.nanoTime() - begin));
        LOGGER.info("{} {} (in this JVM) exited with {} in {} ms", mainClass, args, result.exitCode(),
                result.elapsed().toMillis());
        return result;
    }

    /**
     * Routes {@code System.out}/{@code err} by thread (once, and again if something replaced them) and hooks Kafka's
     * {@code Exit} (once).
     */
    private static void install() {
        synchronized (LOCK) {
            if (System.out != out) {
                out = new PrintStream(new Routed(System.out, run -> run.outBytes), true, StandardCharsets.UTF_8);
                System.setOut(out);
            }
            if (System.err != err) {
                err = new PrintStream(new Routed(System.err, run -> run.errBytes), true, StandardCharsets.UTF_8);
                System.setErr(err);
            }
            if (!exitInstalled) {
                hookExit();
                exitInstalled = true;
            }
        }
    }

    /** {@code Exit.setExitProcedure}/{@code setHaltProcedure}: a tool's thread ends its run, any other the JVM. */
    private static void hookExit() {
        try {
            Class<?> exit = Class.forName(EXIT_CLASS);
            Class<?> procedure = Class.forName(EXIT_CLASS + "$Procedure");
            exit.getMethod("setExitProcedure", procedure).invoke(null, procedure(procedure, false));
            exit.getMethod("setHaltProcedure", procedure).invoke(null, procedure(procedure, true));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("Could not hook Kafka's Exit", e);
        }
    }

    private static Object procedure(Class<?> type, boolean halt) {
        return Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, arguments) -> {
            if (method.getDeclaringClass() == Object.class) {
                return switch (method.getName()) {
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == arguments[0];
                    default -> "InProcessTool " + (halt ? "halt" : "exit") + " procedure";
                };
            }
            int status = (Integer) arguments[0];
            Run run = CURRENT.get();
            if (run == null || run.done) {
                // Kafka's defaults
                if (halt) {
                    Runtime.getRuntime().halt(status);
                } else {
                    System.exit(status);
                }
                return null;
            }
            run.exit(status);
            throw new ToolExit(status);
        });
    }

    /** Thrown through the tool's frames by its {@code Exit.exit}: the process would end here. */
    private static final class ToolExit extends Error {

        private static final long serialVersionUID = 1L;

        ToolExit(int status) {
            super("exit " + status, null, false, false);
        }
    }

    /** One run's output and exit code; output after the first exit is dropped. */
    private static final class Run {

        private final ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        private final ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        final PrintStream err = new PrintStream(new Routed(OutputStream.nullOutputStream(), run -> run.errBytes,
                this), true, StandardCharsets.UTF_8);
        private Integer exitCode;
        /**
         * Set when the tool's thread ends: a thread that inherited the run (a pool thread the tool happened to
         * start) writes and exits as any other thread from then on.
         */
        volatile boolean done;

        synchronized void exit(int status) {
            if (exitCode == null) {
                exitCode = status;
            }
        }

        synchronized int exitCode() {
            return exitCode == null ? 0 : exitCode;
        }

        synchronized String out() {
            return outBytes.toString(StandardCharsets.UTF_8);
        }

        synchronized String err() {
            return errBytes.toString(StandardCharsets.UTF_8);
        }

        synchronized void write(ByteArrayOutputStream target, byte[] bytes, int offset, int length) {
            if (exitCode == null) {
                target.write(bytes, offset, length);
            }
        }
    }

    /** Bytes of a tool's thread to its run's buffer, the rest to the stream it replaced. */
    private static final class Routed extends OutputStream {

        private final OutputStream fallback;
        private final Function<Run, ByteArrayOutputStream> target;
        private final Run fixed;

        Routed(OutputStream fallback, Function<Run, ByteArrayOutputStream> target) {
            this(fallback, target, null);
        }

        Routed(OutputStream fallback, Function<Run, ByteArrayOutputStream> target, Run fixed) {
            this.fallback = fallback;
            this.target = target;
            this.fixed = fixed;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] bytes, int offset, int length) {
            Run run = fixed != null ? fixed : CURRENT.get();
            if (run != null && (run == fixed || !run.done)) {
                run.write(target.apply(run), bytes, offset, length);
                return;
            }
            try {
                fallback.write(bytes, offset, length);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void flush() {
            Run run = fixed != null ? fixed : CURRENT.get();
            if (run != null && (run == fixed || !run.done)) {
                return;
            }
            try {
                fallback.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
