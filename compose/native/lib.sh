# Shared shell functions of the native launchers (sourced by */start and */stop, never run).
# The sourcing script sets NAME (= its directory name) and MAIN_CLASS first.
# Layout of one server's run dir ($RUN, gitignored):  lib/ (Maven-assembled classpath), conf/ and
# scripts/ (copied from the source dir on every start), logs/, data/, server.pid, server.log.

NATIVE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RUN_ROOT=${GRAPHCTX_NATIVE_RUN_DIR:-$NATIVE_DIR/.run}
MAVEN_TIMEOUT=${GRAPHCTX_NATIVE_MAVEN_TIMEOUT:-1800}
STOP_TIMEOUT=${GRAPHCTX_NATIVE_STOP_TIMEOUT:-30}
# the Maven plugin that copies the classpath, pinned so a new release cannot change the assembly
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.6.1
SRC=$NATIVE_DIR/$NAME
RUN=$RUN_ROOT/$NAME
PID_FILE=$RUN/server.pid
LOG_FILE=$RUN/server.log

say() { printf '[%s] %s\n' "$NAME" "$*"; }
die() { printf '[%s] ERROR: %s\n' "$NAME" "$*" >&2; exit 1; }

# Prints a java binary whose major version is 11..23. HugeGraph 1.5 calls System.setSecurityManager,
# which throws from JDK 24 on (JEP 486), so a newer default java must not be picked up.
find_java() {
  local candidates=() c major
  [[ -n ${GRAPHCTX_JAVA:-} ]] && candidates+=("$GRAPHCTX_JAVA")
  [[ -n ${JAVA_HOME:-} ]] && candidates+=("$JAVA_HOME/bin/java")
  command -v java >/dev/null 2>&1 && candidates+=("$(command -v java)")
  for c in /usr/lib/jvm/*17*/bin/java /usr/lib/jvm/*21*/bin/java /usr/lib/jvm/*11*/bin/java; do
    [[ -x $c ]] && candidates+=("$c")
  done
  for c in "${candidates[@]}"; do
    [[ -x $c ]] || continue
    major=$("$c" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p')
    major=${major#1.}
    if [[ $major =~ ^[0-9]+$ ]] && ((major >= 11 && major <= 23)); then
      printf '%s\n' "$c"
      return 0
    fi
  done
  return 1
}

# Copies the runtime classpath of $SRC/pom.xml into $RUN/lib once; reassembles when the pom changes.
# Tries Maven offline first, so a second assembly works from ~/.m2 without a network.
assemble() {
  local stamp_file=$RUN/lib/.assembled stamp tmp
  stamp=$(sha256sum "$SRC/pom.xml" | cut -d' ' -f1)
  if [[ -f $stamp_file && $(cat "$stamp_file") == "$stamp" ]]; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "Maven (mvn) is not on PATH; it is needed once to assemble $NAME"
  say "assembling the classpath from Maven Central into $RUN/lib (first run only; timeout ${MAVEN_TIMEOUT}s)"
  tmp=$RUN/lib.tmp
  rm -rf "$tmp"
  mkdir -p "$RUN"
  local mvn_args=(-B -q -f "$SRC/pom.xml" "$DEPENDENCY_PLUGIN:copy-dependencies"
    -DincludeScope=runtime -DoutputDirectory="$tmp")
  [[ -n ${GRAPHCTX_MAVEN_REPO:-} ]] && mvn_args+=(-Dmaven.repo.local="$GRAPHCTX_MAVEN_REPO")
  local started=$SECONDS
  if ! timeout "$MAVEN_TIMEOUT" mvn -o "${mvn_args[@]}" >"$RUN/assemble.log" 2>&1; then
    rm -rf "$tmp"
    if ! timeout "$MAVEN_TIMEOUT" mvn "${mvn_args[@]}" >"$RUN/assemble.log" 2>&1; then
      tail -n 40 "$RUN/assemble.log" >&2
      die "Maven could not assemble $NAME (log: $RUN/assemble.log)"
    fi
  fi
  rm -rf "$RUN/lib"
  mv "$tmp" "$RUN/lib"
  printf '%s\n' "$stamp" >"$stamp_file"
  say "assembled $(find "$RUN/lib" -name '*.jar' | wc -l) jars in $((SECONDS - started))s"
}

# Refreshes the config in the run dir from the source dir (the source dir is the one to edit).
install_config() {
  mkdir -p "$RUN/logs" "$RUN/data"
  rm -rf "$RUN/conf" "$RUN/scripts"
  cp -r "$SRC/conf" "$RUN/conf"
  [[ -d $SRC/scripts ]] && cp -r "$SRC/scripts" "$RUN/scripts"
  return 0
}

# Prints the pid of our running server, or fails (and removes a stale pid file).
running_pid() {
  local pid
  [[ -f $PID_FILE ]] || return 1
  pid=$(cat "$PID_FILE")
  if [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$MAIN_CLASS"; then
    printf '%s\n' "$pid"
    return 0
  fi
  rm -f "$PID_FILE"
  return 1
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Starts "$JAVA ... $MAIN_CLASS args" in $RUN as a detached background process and writes the pid file.
launch() {
  local pid port
  for port in "${PORTS[@]}"; do
    port_in_use "$port" && die "port $port on 127.0.0.1 is already in use by another process"
  done
  : >"$LOG_FILE"
  (cd "$RUN" && exec setsid "$@" >>"$LOG_FILE" 2>&1 </dev/null) &
  pid=$!
  printf '%s\n' "$pid" >"$PID_FILE"
  say "started (pid $pid, log $LOG_FILE)"
}

# Polls the function `ready` until it succeeds; on timeout or early exit prints the log tail and fails.
wait_ready() {
  local timeout=$1 started=$SECONDS pid
  pid=$(cat "$PID_FILE")
  until ready; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      tail -n 60 "$LOG_FILE" >&2
      die "the server process exited during start-up (log above: $LOG_FILE)"
    fi
    if ((SECONDS - started >= timeout)); then
      tail -n 60 "$LOG_FILE" >&2
      stop_server
      die "not ready after ${timeout}s (log above: $LOG_FILE); stopped it"
    fi
    sleep 1
  done
  say "ready in $((SECONDS - started))s"
}

# SIGTERM, wait up to STOP_TIMEOUT seconds, then SIGKILL; always removes the pid file.
stop_server() {
  local pid waited=0
  if ! pid=$(running_pid); then
    say "not running"
    return 0
  fi
  kill "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && ((waited < STOP_TIMEOUT)); do
    sleep 1
    waited=$((waited + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "still running after ${STOP_TIMEOUT}s; sending SIGKILL"
    kill -9 "$pid" 2>/dev/null || true
    sleep 1
  fi
  rm -f "$PID_FILE"
  say "stopped (pid $pid)"
}
