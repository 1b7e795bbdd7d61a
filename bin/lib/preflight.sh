# Sourced by the bin/ scripts: finds the tools they need and says in one line what is missing.
#   require_java   sets java_bin (JAVA_HOME/bin/java, else java on the PATH) and checks it is Java 17 or newer
#   require_maven  checks that mvn is on the PATH (only needed when something must be built)
# Each prints one line to stderr and exits 1 when the tool is missing.

require_java() {
  if [ -n "${JAVA_HOME:-}" ]; then
    java_bin="$JAVA_HOME/bin/java"
    if [ ! -x "$java_bin" ]; then
      echo "Java 17 is missing: JAVA_HOME=$JAVA_HOME has no bin/java; point JAVA_HOME at a JDK 17+ (e.g. apt-get install openjdk-17-jdk-headless)" >&2
      exit 1
    fi
  elif command -v java >/dev/null 2>&1; then
    java_bin="java"
  else
    echo "Java 17 is missing: no java on the PATH and JAVA_HOME is not set; install a JDK 17+ (e.g. apt-get install openjdk-17-jdk-headless)" >&2
    exit 1
  fi
  local version major
  version="$("$java_bin" -version 2>&1 | awk -F'"' '/version/ { print $2; exit }')"
  major="${version%%.*}"
  if [ "$major" = "1" ]; then
    major="$(echo "$version" | cut -d. -f2)"
  fi
  if ! [ "$major" -ge 17 ] 2>/dev/null; then
    echo "Java 17 is missing: $java_bin is version ${version:-unknown}; install a JDK 17+ (e.g. apt-get install openjdk-17-jdk-headless) and put it on the PATH or in JAVA_HOME" >&2
    exit 1
  fi
}

require_maven() {
  if ! command -v mvn >/dev/null 2>&1; then
    echo "Maven is missing: no mvn on the PATH, and Cairn must be built first; install Maven 3.8+ (e.g. apt-get install maven)" >&2
    exit 1
  fi
}
