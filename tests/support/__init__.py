"""Support for the tests that is not a test itself, imported as ``tests.support.<module>``
(``python -m pytest`` runs from the repository's root, which is on ``sys.path``)."""
