"""Tests for common.cli: user mistakes become errors.UserError."""

import subprocess
import sys
import textwrap

from absl import flags
from absl.testing import absltest

from common import cli
from common import errors


def _define(flag_values):
  flags.DEFINE_integer("steps", 3, "Steps.", flag_values=flag_values)


class CliTest(absltest.TestCase):

  def test_parse_own_flags(self):
    parsed = cli.parse_own_flags(_define, ["prog", "--steps=7"])
    self.assertEqual(parsed.steps, 7)
    self.assertEqual(cli.parse_own_flags(_define, ["prog"]).steps, 3)

  def test_bad_flag_value(self):
    with self.assertRaisesRegex(errors.UserError, "steps"):
      cli.parse_own_flags(_define, ["prog", "--steps=many"])

  def test_unknown_flag(self):
    with self.assertRaisesRegex(errors.UserError, "nope"):
      cli.parse_own_flags(_define, ["prog", "--nope=1"])

  def test_extra_arguments(self):
    with self.assertRaisesRegex(errors.UserError, "unexpected arguments: x y"):
      cli.parse_own_flags(_define, ["prog", "x", "y"])
    cli.reject_arguments(["prog"])

  def test_require_flags(self):
    flag_values = flags.FlagValues()
    for name in ("model_dir", "data_dir", "export_dir"):
      flags.DEFINE_string(name, None, "A folder.", flag_values=flag_values)
    flag_values(["prog", "--data_dir=d", "--export_dir="])
    cli.require_flags("data_dir", flag_values=flag_values)
    with self.assertRaisesRegex(errors.UserError,
                                "^missing required flag: --model_dir$"):
      cli.require_flags("data_dir", "model_dir", flag_values=flag_values)
    with self.assertRaisesRegex(
        errors.UserError,
        "^missing required flags: --model_dir, --export_dir$"):
      cli.require_flags("model_dir", "export_dir", flag_values=flag_values)

  def test_run_prints_one_line_and_exits_2(self):
    done = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        from common import cli, errors
        def main(argv):
          raise errors.UserError("bad input file")
        cli.run(main)
        """)], capture_output=True, text=True, timeout=60)
    self.assertEqual(done.returncode, 2)
    self.assertEqual(done.stderr.strip(), "error: bad input file")


if __name__ == "__main__":
  absltest.main()
