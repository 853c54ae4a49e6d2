# Source me: the URLs of the native (and docker-compose) test servers, as the tests and users read them.
# The port variables are the ones compose/native/*/start honour (defaults = the ports in the configs).
export GRAPHCTX_TEST_HUGEGRAPH_URL=http://127.0.0.1:${GRAPHCTX_HUGEGRAPH_REST_PORT:-18080}
export GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL=ws://127.0.0.1:${GRAPHCTX_HUGEGRAPH_GREMLIN_PORT:-18182}/gremlin
export GRAPHCTX_TEST_GREMLIN_URL=ws://127.0.0.1:${GRAPHCTX_GREMLIN_PORT:-18183}/gremlin
