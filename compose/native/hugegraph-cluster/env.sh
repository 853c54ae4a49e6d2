# Source me: the URLs of the native HugeGraph cluster (compose/native/up hugegraph-cluster), as the
# cluster's tests and the benchmark read them. Kept apart from ../env.sh: the cluster is started only
# when needed, and tests that require the standalone servers must not require it too.
# shellcheck source=ports.sh
source "$(dirname "${BASH_SOURCE[0]}")/ports.sh"
export GRAPHCTX_TEST_HGCLUSTER_URL=http://127.0.0.1:$(server_port rest 1)
export GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL=ws://127.0.0.1:$(server_port gremlin 1)/gremlin
export GRAPHCTX_TEST_HGCLUSTER_URL_2=http://127.0.0.1:$(server_port rest 2)
export GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL_2=ws://127.0.0.1:$(server_port gremlin 2)/gremlin
export GRAPHCTX_TEST_HGCLUSTER_PD_URL=http://127.0.0.1:$PD_REST_PORT
