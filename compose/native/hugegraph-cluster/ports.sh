# Sourced by ./ctl and ./env.sh: every port of the native cluster, as GRAPHCTX_HUGEGRAPH_CLUSTER_PORT_BASE
# (default 18600, clear of the standalone servers' 18080/18182/18183) plus a fixed offset.
HUGEGRAPH_CLUSTER_VERSION=1.5.0
_hgc_base=${GRAPHCTX_HUGEGRAPH_CLUSTER_PORT_BASE:-18600}
PD_RAFT_PORT=$((_hgc_base + 0))
PD_REST_PORT=$((_hgc_base + 1))
PD_GRPC_PORT=$((_hgc_base + 2))

# store_port KIND INDEX  (KIND: grpc raft rest arthas_telnet arthas_http; INDEX 0-2)
store_port() {
  local offset
  case $1 in
    grpc) offset=10 ;; raft) offset=20 ;; rest) offset=30 ;; arthas_telnet) offset=70 ;; arthas_http) offset=75 ;;
  esac
  printf '%s\n' $((_hgc_base + offset + $2))
}

# server_port KIND INDEX  (KIND: rest gremlin rpc arthas_telnet arthas_http; INDEX 1-2)
server_port() {
  local offset
  case $1 in
    rest) offset=40 ;; gremlin) offset=50 ;; rpc) offset=60 ;; arthas_telnet) offset=80 ;; arthas_http) offset=85 ;;
  esac
  printf '%s\n' $((_hgc_base + offset + $2))
}

store_grpc_list() {
  printf '127.0.0.1:%s,127.0.0.1:%s,127.0.0.1:%s\n' "$(store_port grpc 0)" "$(store_port grpc 1)" "$(store_port grpc 2)"
}

print_urls() {
  printf 'PD http://127.0.0.1:%s; servers' "$PD_REST_PORT"
  local j
  for j in 1 2; do
    printf ' http://127.0.0.1:%s + ws://127.0.0.1:%s/gremlin' "$(server_port rest $j)" "$(server_port gremlin $j)"
  done
  printf '\n'
}

print_ports() {
  printf 'pd       raft %s  rest %s  grpc %s\n' "$PD_RAFT_PORT" "$PD_REST_PORT" "$PD_GRPC_PORT"
  local i
  for i in 0 1 2; do
    printf 'store-%s  grpc %s  raft %s  rest %s\n' "$i" "$(store_port grpc $i)" "$(store_port raft $i)" "$(store_port rest $i)"
  done
  for i in 1 2; do
    printf 'server-%s rest %s  gremlin %s  rpc %s\n' "$i" "$(server_port rest $i)" "$(server_port gremlin $i)" "$(server_port rpc $i)"
  done
}
