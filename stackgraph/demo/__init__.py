"""The demo: the example platform of `examples/` played through the product, end to end.

The demo is a client of the product. It calls the lanes, the read path, the HTTP API and
the agent through their public functions, as a user's script would; nothing in the product
imports it (`tests/foundation/test_layout.py` fails if anything does). The CLI offers it as
`stackgraph demo` through the entry-point group `stackgraph.commands` (`command.py`).

    run.py       the steps, in order, and `run_demo`
    context.py   what the steps share (`DemoContext`)
    code.py      the demo repo (PR history at fixed times) and the code step
    infra.py     the infra and change steps
    api_step.py  the alert through the API and the agent, and the web UI's URL
"""
