"""The streaming shell: a Faust worker that runs the pure core over Kafka.

``app.py`` builds the Faust app from ``Settings``; ``topics.py`` and ``tables.py`` declare what it
reads and keeps; ``agents.py`` holds the agents (detect, flag sink, session sink); ``deadletter.py``
turns undecodable records into dead letters; ``produce.py`` ships logs to the input topic. The
record formats and how to scale out are in ``schemas/stream.md``.
"""
