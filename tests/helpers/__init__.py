"""What the tests share: fakes, builders of inputs and the checks several test files make. No test lives here.

``tests`` is on the import path (pytest.ini, ``pythonpath``), so a test imports ``helpers.<module>``; a test file
never imports another test file.
"""
