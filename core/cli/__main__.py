from graphctx.cli import main

main()
