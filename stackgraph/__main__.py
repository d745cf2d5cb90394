from stackgraph.cli import main

main()
