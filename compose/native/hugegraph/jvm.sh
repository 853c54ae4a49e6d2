# Sourced by ./start and ../hugegraph-cluster/ctl: how a HugeGraph server JVM is launched.

# HugeGraph's own classpath order (bin/hugegraph-server.sh): the slf4j binding, then hugegraph*, then the
# rest. $1 = the dir holding lib/; prints paths relative to it.
hugegraph_classpath() {
  (cd "$1" && {
    ls lib/log4j-slf4j-impl-*.jar
    ls lib/hugegraph-*.jar | sort
    ls lib/*.jar | grep -v -e '^lib/hugegraph-' -e '^lib/log4j-slf4j-impl-' | sort
  } | paste -sd:)
}

# HugeGraph's JDK 9+ flags plus the add-opens TinkerPop documents for JDK 17. $1 = -Xmx value.
hugegraph_jvm_opts() {
  HUGEGRAPH_JVM_OPTS=(
    -Xms256m -Xmx"$1" -Dname=HugeGraphServer -Dlog4j.configurationFile=conf/log4j2.xml
    --add-exports=java.base/jdk.internal.reflect=ALL-UNNAMED --add-modules=jdk.unsupported
    --add-exports=java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED
    --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
    --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
    --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    --add-opens=java.base/sun.nio.cs=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
  )
}
