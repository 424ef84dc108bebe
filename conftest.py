"""pytest hooks for the whole suite."""


def pytest_collection_modifyitems(items):
  """Drops `tf.test.TestCase.test_session`, which pytest collects as a test.

  It is a context manager every TensorFlow test case inherits, not a test;
  pytest reports it as skipped ("Not a test."), which hid the suite's real
  skips among ~90 of these. `python -m <module>` (absltest, and so Bazel)
  never ran it as a test.
  """
  items[:] = [item for item in items
              if not (item.name == "test_session"
                      and getattr(item, "cls", None) is not None
                      and item.cls.__dict__.get("test_session") is None)]
