# Sourced by bin/cairn-failover and bin/cairn-perf --brokers: runs a main class of compat-tests' figure harnesses
# (io.cairn.compat.figures, which start their brokers with testkit's BrokerCluster) in its own JVM.
#   figures_java <main class> [args...]   needs java_bin (require_java) and base_dir; work_dir for the logs
# Builds Cairn and compat-tests first (mvn -Dquick -pl compat-tests -am verify) when the classpath files are missing
# or any source of the repository is newer than them, so a checkout that moved on never runs stale code.

figures_build() {
  local marker="$base_dir/compat-tests/target/test.classpath"
  if [ ! -s "$marker" ] || [ ! -s "$base_dir/compat-tests/target/kafka.classpath" ] \
      || [ -n "$(find "$base_dir"/pom.xml "$base_dir"/codegen "$base_dir"/wire "$base_dir"/log "$base_dir"/metadata \
        "$base_dir"/isr "$base_dir"/broker "$base_dir"/testkit "$base_dir"/compat-tests \( -path '*/target' -prune \) \
        -o -type f \( -name '*.java' -o -name 'pom.xml' -o -path '*/src/*/resources/*' \) -newer "$marker" -print \
        -quit 2>/dev/null)" ]; then
    require_maven
    echo "Building Cairn and compat-tests (mvn -Dquick -pl compat-tests -am verify; a few minutes on a first run)..." >&2
    if ! (cd "$base_dir" && mvn -q -B -Dstyle.color=never -Dquick -pl compat-tests -am verify >&2) \
        || [ ! -s "$marker" ]; then
      echo "The build failed: Maven's errors are above (mvn -Dquick -pl compat-tests -am verify)" >&2
      exit 1
    fi
    # Maven rewrites the classpath file only when it changes: its time is set to this build's, so the next run does
    # not build again.
    touch "$marker"
  fi
}

# The harness's own log: testkit's INFO lines (starts, stops, timings) and everything else at WARN, on stderr.
figures_log4j() {
  cat > "$work_dir/figures-log4j2.properties" <<'PROPS'
status = warn
appender.console.type = Console
appender.console.name = CONSOLE
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.console.ref = CONSOLE
logger.cairn.name = io.cairn
logger.cairn.level = INFO
PROPS
}

figures_java() {
  figures_build
  figures_log4j
  local jar
  jar="$(ls "$base_dir"/broker/target/cairn-broker-*.jar | grep -v -e '-sources' -e '-javadoc' -e '-tests' | head -n 1)"
  # shellcheck disable=SC2086
  "$java_bin" ${FIGURES_OPTS:--Xmx512m} -Dlog4j2.configurationFile="$work_dir/figures-log4j2.properties" \
    -Dcairn.broker.jar="$jar" -Dcairn.kafka.classpath.file="$base_dir/compat-tests/target/kafka.classpath" \
    -Dcairn.broker.logs.dir="$work_dir/broker-logs" \
    -cp "$base_dir/compat-tests/target/test-classes:$(cat "$base_dir/compat-tests/target/test.classpath")" "$@"
}
