"""The intake review page: a reviewer turns a sampled session into a fixture.

Pure parts: ``decisions`` folds the recorded actions over a draft into each candidate's verdict,
``timeline`` lays a captured transcript out by turn, ``fixture`` builds and checks the finished
fixture, ``auth`` holds tokens, session cookies and CSRF tokens. ``web`` is the aiohttp shell.
"""
