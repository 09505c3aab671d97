"""The playground page's files (HTML, JavaScript, CSS), served by ``server/playground.py``.

A package only so that setuptools ships the folder as package data without warning."""
