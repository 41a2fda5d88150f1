"""Write docs/guide/survey.md: publishing a labelled survey file, from a real run.

The page walks a curator from a labelled SPSS file to a verified release and its report. This
script builds that file (UCI Adult coded as a statistical office codes a survey, with the ARX
hierarchies beside it: ``tests/_survey_files.py``) in a temporary folder, runs the commands the
page shows, and embeds what they printed, verbatim.

    python docs/gen_survey_guide.py              # a 5,000-row sample of Adult (quick)
    python docs/gen_survey_guide.py --rows 0     # all 48,842 rows

The benchmark data folder (``adult.csv.gz`` and ``adult_arx/``) is ``$INCROWD_DATA``, else
``../shared/data`` beside the checkout (``--data-dir`` overrides both).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "guide" / "survey.md"
#: the quasi-identifiers whose risk `incrowd risk` measures (the keys an intruder may know)
RISK_QI = "age,workclass,education,marital_status,occupation,relationship,race,sex,native_country"
#: suppression limits tried, in order, after the spec's own is refused
RAISES = ["5%", "10%", "15%", "20%", "25%"]
HEADLINE = ["global_risk", "expected_reidentifications", "highest_individual_risk", "sample_uniques",
            "records_above_threshold", "k_violations"]


def _incrowd() -> str:
    beside = Path(sys.executable).with_name("incrowd")
    return str(beside) if beside.exists() else (shutil.which("incrowd") or "incrowd")


def _run(folder: Path, *args: str, stdout_file: str | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([_incrowd(), *args], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"})
    if stdout_file is not None:
        (folder / stdout_file).write_text(proc.stdout, encoding="utf-8")
    return proc


def _cmd(*args: str) -> str:
    return "incrowd " + " ".join(args)


def _block(text: str, lang: str = "text") -> str:
    return f"```{lang}\n{text.rstrip()}\n```\n"


def _set(spec: str, pattern: str, line: str) -> str:
    new, n = re.subn(pattern, line, spec, count=1, flags=re.M)
    if n != 1:
        raise SystemExit(f"the example spec has no line matching {pattern!r}; update docs/gen_survey_guide.py")
    return new


def run(rows: int, data_dir: Path, folder: Path) -> dict:
    sys.path.insert(0, str(ROOT / "tests"))
    from _survey_files import write_hierarchies, write_sav

    out: dict = {"rows_asked": rows}
    write_sav(folder / "adult.sav", data_dir, n=rows or None)
    write_hierarchies(folder, data_dir)
    out["listing"] = "\n".join(sorted(p.name for p in folder.iterdir()))

    # 1. the starting spec, guessed from the file's metadata
    example = _run(folder, "publish", "adult.sav", "--example-spec", stdout_file="release.toml")
    if example.returncode:
        raise SystemExit(f"--example-spec failed:\n{example.stderr}")
    out["example_spec"] = example.stdout

    # 2. the curator's check: income is what the release must not give away (proposed so by its name)
    spec = example.stdout
    if not re.search(r'^income = "sensitive"', spec, re.M):
        spec = _set(spec, r'^income = .*$', 'income = "sensitive"')
    (folder / "release.toml").write_text(spec, encoding="utf-8")
    out["spec_max_suppression"] = re.search(r'^max_suppression = "([^"]*)"', spec, re.M).group(1)

    # 3. the first try, at the spec's suppression limit
    publish = ["publish", "adult.sav", "--spec", "release.toml", "-o", "release.sav", "--report", "report.html"]
    first = _run(folder, *publish, "-q")
    out["first"] = (first.returncode, first.stdout, first.stderr)

    # 4. more suppression, until a release is made
    out["refused"] = []
    made = first if first.returncode == 0 else None
    limit = out["spec_max_suppression"]
    if made is None:
        for limit in RAISES:
            spec = _set(spec, r'^max_suppression = "[^"]*"', f'max_suppression = "{limit}"')
            (folder / "release.toml").write_text(spec, encoding="utf-8")
            attempt = _run(folder, *publish, "-q")
            if attempt.returncode == 0:
                made = attempt
                break
            out["refused"].append((limit, attempt.stderr.strip()))
    if made is None:
        raise SystemExit("no suppression limit tried publishes the sample; try more --rows")
    out["limit"] = limit
    out["final_spec_privacy"] = "[privacy]" + spec.split("[privacy]", 1)[1].split("[columns]")[0].rstrip()
    out["summary"] = made.stdout
    out["publish_cmd"] = _cmd(*publish)

    # 5. the same report as JSON, for its verdict
    as_json = [a if a != "report.html" else "report.json" for a in publish]
    again = _run(folder, *as_json, "-q")
    if again.returncode:
        raise SystemExit(f"publishing with --report report.json failed:\n{again.stderr}")
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    out["verdict"] = report["verdict"]
    out["report_assumptions"] = report.get("assumptions", [])
    out["report_html_kib"] = (folder / "report.html").stat().st_size // 1024

    # 6. risk of the original and of the release, as sdcMicro measures it
    out["risk"] = {}
    for name in ("adult.sav", "release.sav"):
        args = ["risk", name, "--qi", RISK_QI, "--weight", "fnlwgt", "--json", "-q"]
        proc = _run(folder, *args)
        if proc.returncode:
            raise SystemExit(f"{_cmd(*args)} failed:\n{proc.stderr}")
        summary = json.loads(proc.stdout)["summary"]
        out["risk"][name] = {key: summary[key] for key in HEADLINE if key in summary}
    text = _run(folder, "risk", "release.sav", "--qi", RISK_QI, "--weight", "fnlwgt", "-q")
    out["risk_text"] = text.stdout

    # 7. the release as a reader of .sav sees it
    readback = (
        "import pyreadstat\n"
        "df, meta = pyreadstat.read_sav(\"release.sav\", user_missing=True)\n"
        "for col in (\"workclass\", \"education\"):\n"
        "    print(col, meta.variable_measure[col], meta.missing_ranges.get(col))\n"
        "    labels = meta.variable_value_labels[col]\n"
        "    for code, n in df[col].value_counts().sort_index().items():\n"
        "        print(f\"  {code:g} {labels.get(code)!r}: {n} rows\")\n"
    )
    proc = subprocess.run([sys.executable, "-c", readback], cwd=folder, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"reading release.sav back failed:\n{proc.stderr}")
    out["readback_code"] = readback
    out["readback"] = proc.stdout
    return out


def render(out: dict, command: str) -> str:
    rows = out["rows_asked"]
    sample = "all 48,842 rows of Adult" if not rows else f"a {rows:,}-row random sample of Adult"
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    from incrowd import __version__

    other = ("`--rows 0` runs all of Adult" if rows else
             "`python docs/gen_survey_guide.py` alone runs a 5,000-row sample, quicker")
    first_rc, first_out, first_err = out["first"]
    p: list[str] = []
    p.append(f"""# Publish a survey file

This guide takes a statistical office's survey file, an SPSS `.sav` with numeric codes, value
labels, user-missing codes and a survey weight, to a release that is verified k-anonymous over
all its quasi-identifiers together, with its risk and utility report. Every output below was
printed by incrowd on {sample}, coded as a survey file.

!!! note "How this page was made"
    Generated on {now} with incrowd {__version__} by `{command}`
    ({other}), which builds the file,
    runs each command below in a temporary folder and copies what it printed here, unedited.
    Run it again after changing a command or its output; do not edit this page by hand.

## 1. Put the file and its hierarchies in one folder

The file, `adult.sav`, stores each categorical variable as numeric codes with value labels
(`sex` 1 "Male", 2 "Female"), Adult's unknown values as the user-missing code 99 "Not stated"
(declared missing in the file), a respondent id `respid` and the survey weight `fnlwgt`. Beside
it are the generalization hierarchies, one CSV per variable in ARX's format (a value, then its
coarser groups, `;`-separated, up to `*`), written in the variables' labels:

{_block(out["listing"])}
The next step proposes a hierarchy for each column whose name the file's name holds, so keep
them beside the data (or in a `hierarchies/` folder there); a file named otherwise
(`adult_hierarchy_salary-class.csv` is ARX's name for `income`) is only used where the spec names
it (`hierarchy = "..."`). A hierarchy may list a column's value labels or its codes:
`match = "label"` or `match = "code"` in the column's entry says which; without it incrowd takes
whichever level 0 holds and refuses one that holds neither, naming a code and a label it lacks,
or one that holds both and reads differently either way (then `match` decides). Matched by label,
two codes the data holds under one value label are refused, naming both codes and the label.
Codes compare as numbers (a file's 7 meets a hierarchy's `7` or `7.0`), and a user-missing code
is a value of its own: it needs its own row in the hierarchy (here `Not stated;Not stated;*`,
the one row added to ARX's files for the variables with unknown values). The details are in
[Labels, codes and weights](../publishing.md#labels-codes-and-weights).

## 2. Let incrowd propose a specification

```sh
incrowd publish adult.sav --example-spec > release.toml
```

incrowd reads the file's metadata and proposes a role for every column:

{_block(out["example_spec"], "toml")}
What to check, line by line:

- **identifier**: `respid` is distinct on every row; it is dropped from the release.
- **weight**: `fnlwgt` is recognized by its name (or its variable label). A weight passes
  through unchanged, is never a quasi-identifier, must be a number >= 0 in every row, and is
  what the risk measures of step 5 count people with. A release has one weight.
- **categorical** with a `hierarchy`: the columns with value labels or a nominal or ordinal
  measure, each with the hierarchy file whose name matches (compared without case, spaces and
  punctuation: `adult_hierarchy_marital-status.csv` for `marital_status`). A categorical column
  without one, like `relationship` here, can only keep its value or become `*`.
- **user-missing codes** are listed beside their column (`+ user-missing 99 "Not stated"`).
- **numeric**: the scale variables; they are microaggregated within each class.
- **perturb**: the amounts (`capital_gain`, `capital_loss`: named as amounts of money, numbers
  >= 0): not quasi-identifiers, but changed on their own after the keys are protected, by the
  `[[perturb]]` step below the columns (microaggregation, k = 3; see
  [Perturbation](perturbation.md)). Make one `numeric` if an intruder could know it.
- Every column the spec lists as `categorical` or `numeric` is a quasi-identifier: a value an
  intruder may know from elsewhere. Turn a column that is not one into `"other"` (published
  unchanged).
- **privacy models**: every model publish meets is listed below `k`, commented out, as a
  setting you may uncomment (a model a plug-in registers is listed too); see
  [Privacy models](privacy-models.md).
- **max_suppression**: the smallest of 1, 2, 5, 10 and 20 % that these roles and hierarchies can
  meet at k = 5. Where 1 % is too little, the comment above it says how many rows stay in classes
  under k even at the most general levels, and which column holds them there.

## 3. Say what must be protected

The proposal takes `income` for sensitive, by its name: it is what an intruder wants to learn,
not what they know. A column it cannot recognize so is made sensitive by hand:

```toml
income = "sensitive"
```

A sensitive column is published unchanged; `l = 2` or `t = 0.3` in `[privacy]` would also ask
every class to hold varied values of it (see [k, l and t](privacy-models.md)).

## 4. Publish

{_block(out["publish_cmd"], "sh")}
""")
    if first_rc == 0:
        p.append(f"At the proposed `max_suppression = \"{out['spec_max_suppression']}\"` the release is made "
                 "at the first try (had the limit been too small, incrowd would refuse in one line, write "
                 "nothing, and name the column that holds the classes small and the levers: more "
                 "suppression, a lower k, or a hierarchy). The summary:\n\n")
    else:
        p.append(f"""At the proposed `max_suppression = "{out['spec_max_suppression']}"` incrowd refuses, in one line
on stderr (exit code 2), and writes nothing:

{_block(first_err.strip())}
Read it from the end: even the highest generalization leaves more rows in classes smaller than
k than the limit allows; the line names the column that holds the classes small. The remedies
it names are the curator's choices: allow more suppression, lower k, or give the column a
hierarchy.

""")
        tried = [f'`"{limit}"`' for limit, _ in out["refused"]]
        if out["refused"]:
            listed = tried[0] if len(tried) == 1 else ", ".join(tried[:-1]) + " and " + tried[-1]
            p.append(f"""On this sample, {listed} {"is" if len(tried) == 1 else "are"} refused the same way:
a smaller file has fewer look-alikes per person, so it needs more suppression than the full
file (on all of Adult, `"5%"` publishes). The last refusal:

{_block(out["refused"][-1][1])}
""")
        p.append(f"""With `max_suppression = "{out['limit']}"` the `[privacy]` table reads

{_block(out["final_spec_privacy"], "toml")}
and the same command publishes:

""")
    p.append(f"""{_block(out["summary"])}
What to check in the summary:

- **levels**: how far each categorical column was generalized (0 is the file's own values).
- **suppressed**: the rows left out, within `max_suppression`.
- **classes, smallest**: at least k rows share every combination of quasi-identifier values.
- **numeric IL** and **categorical loss**: what the release costs an analyst.
- **verified ... on the written file**: `release.sav` was read back as a reader of SPSS files
  reads it and checked k-anonymous (over the codes as stored) before it was put in place.

## 5. Read the verdict

`--report report.html` wrote the risk and utility report as one self-contained page
({out["report_html_kib"]} KiB). The same command with `--report report.json` writes it as JSON;
its `verdict` holds one line per measure, with a status (`pass` or `review`), what drives the
figure and the next step to take:

""")
    p.append(_block("\n".join(json.dumps(v) for v in out["verdict"]), "json"))
    p.append("""
A `review` is a question for the curator, not a failure: the release keeps its promise (`k` is
`promised`), and the other lines weigh risks k does not cover, such as classes whose sensitive
value is the same for everyone. The report lists what it assumed:

""")
    p.append(_block("\n".join(f"- {a}" for a in out["report_assumptions"])))
    p.append(f"""
[Reading the report](report.md) explains each line and [the report's reference](../report.md)
each measure.

## 6. Compare the risk before and after

`incrowd risk` measures the re-identification risk as sdcMicro does, with the weight telling how
many people each row stands for:

```sh
incrowd risk adult.sav --qi {RISK_QI} --weight fnlwgt --json
incrowd risk release.sav --qi {RISK_QI} --weight fnlwgt --json
```

The keys (`--qi`) are what an intruder may know: here age and the categorical
quasi-identifiers; take yours from your disclosure scenario. The headline figures of each (the
`summary` object, these keys):

""")
    for name, figures in out["risk"].items():
        p.append(f"`{name}`:\n\n{_block(json.dumps(figures, indent=2), 'json')}\n")
    p.append(f"""Without `--json` the release's figures read:

{_block(out["risk_text"])}
[Disclosure risk of a survey](../risk.md) explains each measure; note that there a missing key
value matches any value, as in sdcMicro, while a user-missing code is a value of its own.

## 7. Open the release as its users will

Read the release back with the reader your users have, here pyreadstat:

{_block(out["readback_code"], "python")}
{_block(out["readback"])}
A generalized column stays a numeric variable with value labels: an unchanged value keeps its
code and label, a group takes a new code above the column's largest (numbered in the order of
the hierarchy, so the same hierarchy and file give the same codes in every release), and the
user-missing 99 "Not stated" stays 99, still declared missing. A measurement generalized to
ranges (age in ten-year bands) is written the same way: a numeric variable whose new codes carry
the labels "0-9", "10-19", ..., with the measure ordinal; `*` gets a code and a label only where a
cell holds it, and a blanked cell is system-missing. Check that the labels read as your users
expect before you hand the file out.

## Where to go next

- [Mixed releases](publishing.md): the specification in full, the two strategies, `[levels]`.
- [Publishing survey files](../publishing.md): codes, labels, weights, what counts as a value.
- [Disclosure risk of a survey](../risk.md) and [Reading the report](report.md).
- [CLI reference](../cli.md): every option of `publish`, `risk` and `report`.
""")
    return "".join(p)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000,
                        help="rows of Adult to draw (0: all 48,842); default 5000")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="benchmark data folder (default: $INCROWD_DATA, else ../shared/data)")
    args = parser.parse_args()
    data_dir = args.data_dir
    if data_dir is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from benchdata import data_dir as find

        data_dir = find()
    if not (data_dir / "adult.csv.gz").exists() or not (data_dir / "adult_arx").is_dir():
        print(f"{data_dir} lacks adult.csv.gz or adult_arx/: give --data-dir", file=sys.stderr)
        return 2
    command = "python docs/gen_survey_guide.py" + ("" if args.rows == 5000 else f" --rows {args.rows}")
    with tempfile.TemporaryDirectory(prefix="incrowd-survey-guide-") as tmp:
        out = run(args.rows, data_dir, Path(tmp))
    PAGE.write_text(render(out, command), encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
