"""``allennlp elmo-demo``: a web page that draws the six task models' predictions and the biLM's neighbours.

``command.py`` the command; ``loaded_models.py`` archives to predictors (``tasks.py`` the six
tasks and their forms, ``archive_info.py`` biLM and scores, ``mixing_weights.py`` the learned
mixes); ``app.py`` the routes, ``runner.py`` predictions off the event loop, ``request_json.py``
bounded bodies and API errors; ``pages.py`` and ``static/`` what the browser gets;
``bilm_neighbours.py``, ``bilm_query.py`` and ``neighbour_corpus.txt`` the biLM page;
``server.py`` uvicorn. Importing this package imports nothing heavy (docs/DEMO.md).
"""
