# Sourced by ./start and ./stop after ../lib.sh: GRAPHCTX_HUGEGRAPH_VERSION picks the HugeGraph release.
# 1.5.0 (default) uses ./pom.xml and the run dir .run/hugegraph; 1.7.0 uses 1.7.0/pom.xml, overlays
# 1.7.0/conf on conf/ and runs in its own dir .run/hugegraph-1.7.0, so both can be assembled side by side.
VERSION=${GRAPHCTX_HUGEGRAPH_VERSION:-1.5.0}
case $VERSION in
  1.5.0) POM_DIR=$SRC ;;
  1.7.0)
    POM_DIR=$SRC/1.7.0
    RUN=$RUN_ROOT/hugegraph-1.7.0
    PID_FILE=$RUN/server.pid
    LOG_FILE=$RUN/server.log
    ;;
  *) die "GRAPHCTX_HUGEGRAPH_VERSION must be 1.5.0 or 1.7.0, not '$VERSION'" ;;
esac
