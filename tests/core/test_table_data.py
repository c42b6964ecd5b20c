"""Reading CSV datasets: tables, regression, texts, and every kind of bad input."""

import json
import threading

import numpy as np
import pytest

from studio.core.data import tables as table_data
from studio.core.data.sources import describe, load
from studio.core.data.tables import csv_columns, read_table, table_info, table_report
from studio.core.data.types import DataError, DataPending, TableSamples, TextSamples
from studio.core.project.document import DatasetChoice


def write(tmp_path, text, name="data.csv", encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def choice(path, **kw):
    return DatasetChoice(source="csv", path=str(path), **kw)


def read(tmp_path, text, **kw):
    return read_table(choice(write(tmp_path, text), **kw))


def error(tmp_path, text, **kw):
    with pytest.raises(DataError) as caught:
        read(tmp_path, text, **kw)
    return str(caught.value)


IRIS = ("length,width,species\n1.0,2,setosa\n3,4.5,virginica\n5,6,setosa\n7,8,versicolor\n"
        "0,1,virginica\n2,3,versicolor\n")


def test_classification_table(tmp_path):
    table = read(tmp_path, IRIS)
    assert table.info.kind == "table" and table.info.task == "classification"
    assert table.info.sample_shape == (2,)
    assert table.info.class_names == ("setosa", "versicolor", "virginica")
    assert table.info.num_samples == 6
    assert isinstance(table.samples, TableSamples)
    assert table.samples.columns == ["length", "width"]
    np.testing.assert_array_equal(table.samples.features,
                                  [[1, 2], [3, 4.5], [5, 6], [7, 8], [0, 1], [2, 3]])
    assert table.samples.features.dtype == np.float32
    assert table.labels.dtype == np.int32
    assert table.labels.tolist() == [0, 2, 0, 1, 2, 1]
    assert table.notes == []


def test_numeric_class_names_sort_as_numbers(tmp_path):
    table = read(tmp_path, "x,y\n1,10\n2,2\n3,1\n4,2\n")
    assert table.info.class_names == ("1", "2", "10")
    assert table.labels.tolist() == [2, 1, 0, 1]


def test_label_column_by_name_ignoring_case(tmp_path):
    table = read(tmp_path, "kind,a,b\ncat,1,2\ndog,3,4\n", label_column="KIND")
    assert table.info.class_names == ("cat", "dog")
    assert table.samples.columns == ["a", "b"]


def test_regression_labels_are_floats(tmp_path):
    table = read(tmp_path, "a,price\n1,2.5\n2,3.5\n3,-1\n", task="regression")
    assert table.info.task == "regression" and table.info.num_classes == 0
    assert table.labels.dtype == np.float32
    np.testing.assert_array_equal(table.labels, [2.5, 3.5, -1])
    assert table.report["label_range"] == {"min": -1.0, "max": 3.5, "mean": pytest.approx(5 / 3),
                                           "std": pytest.approx(np.std([2.5, 3.5, -1]))}


def test_regression_label_that_is_not_a_number_names_the_rows(tmp_path):
    message = error(tmp_path, "a,price\n1,2.5\n2,cheap\n3,4\n4,inf\n", task="regression")
    assert "'price'" in message and "data.csv" in message
    assert "line 3: 'cheap'" in message and "line 5: 'inf'" in message
    assert "2 rows" in message and "classification" in message


def test_missing_values_become_nan_and_are_counted(tmp_path):
    text = "a,b,y\n1,,x\n2,NA,y\nnan,3,x\n4,?,y\n5,null,x\n6,N/A,y\n"
    table = read(tmp_path, text)
    features = table.samples.features
    assert np.isnan(features[:, 1]).sum() == 5 and np.isnan(features[:, 0]).sum() == 1
    assert "6 values are missing (a: 1, b: 5)" in " ".join(table.notes)
    assert table.report["missing_values"] == {"a": 1, "b": 5}


def test_rows_without_a_label_are_skipped_with_a_count(tmp_path):
    table = read(tmp_path, "a,y\n1,x\n2,\n3,NA\n4,y\n5,x\n6,y\n")
    assert table.info.num_samples == 4
    assert "2 rows have no label in 'y' and were skipped; the first is line 3." in table.notes
    assert table.report["rows_skipped"] == {"missing_label": 2}


def test_mostly_numbers_column_counts_text_cells_as_missing(tmp_path):
    table = read(tmp_path, "age,y\n30,a\n41,b\nunknown,a\n25,b\n")
    assert table.samples.columns == ["age"]
    assert np.isnan(table.samples.features[2, 0])
    assert any("'age' holds 1 cell that is not a number (e.g. 'unknown' on line 4)" in n
               for n in table.notes)


def test_mostly_text_column_is_left_out(tmp_path):
    table = read(tmp_path, "code,a,y\nx1,1,a\nx2,2,b\n3,3,a\nx4,4,b\n")
    assert table.samples.columns == ["a"]
    assert "Column 'code' is left out: it holds mostly text, not numbers." in table.notes
    assert table.report["left_out"] == [{"column": "code", "reason": "mostly text"}]


def test_text_and_empty_columns_are_left_out_by_name(tmp_path):
    table = read(tmp_path, "city,name,blank,a,y\nParis,Ann,,1,a\nRome,Bo,,2,b\n")
    assert table.samples.columns == ["a"]
    assert "Columns 'city', 'name' are left out: they hold text, not numbers." in table.notes
    assert "Column 'blank' is left out: it is empty." in table.notes


def test_no_numeric_feature_column_is_an_error(tmp_path):
    message = error(tmp_path, "city,y\nParis,a\nRome,b\n")
    assert "no column of numbers" in message and "'city'" in message
    assert "data.csv" in message


def test_missing_label_column_lists_the_columns(tmp_path):
    message = error(tmp_path, IRIS, label_column="colour")
    assert "no column 'colour'" in message
    assert "'length', 'width', 'species'" in message


def test_label_and_text_column_must_differ(tmp_path):
    message = error(tmp_path, "t,y\nhi,a\nho,b\n", label_column="t", text_column="t")
    assert "both the label and the text" in message


def test_empty_and_blank_files(tmp_path):
    assert "empty" in error(tmp_path, "")
    assert "empty" in error(tmp_path, "\n  \n")


def test_header_only(tmp_path):
    message = error(tmp_path, "a,b,label\n")
    assert "only a header" in message and "'label'" in message


def test_a_first_row_of_numbers_is_read_as_the_header_with_a_note(tmp_path):
    table = read(tmp_path, "5.1,3.5,0\n4.9,3.0,0\n6.2,2.9,1\n")
    assert table.samples.columns == ["5.1", "3.5"] and table.info.num_samples == 2
    assert any("looks like data, not column names" in n for n in table.notes)


def test_a_single_column_is_an_error(tmp_path):
    assert "single column" in error(tmp_path, "values\n1\n2\n")


def test_a_single_class_is_an_error(tmp_path):
    message = error(tmp_path, "a,y\n1,cat\n2,cat\n")
    assert "'cat'" in message and "two classes" in message


def test_ragged_rows_are_skipped_with_a_count_and_the_first_line(tmp_path):
    table = read(tmp_path, "a,b,y\n1,2,x\n3,y\n4,5,y\n6,7,8,z\n9,10,x\n")
    assert table.info.num_samples == 3
    assert ("2 rows have fewer fields or more fields than the header's 3 and were skipped; "
            "the first is line 3.") in table.notes
    assert table.report["rows_skipped"] == {"wrong_field_count": 2}


def test_only_ragged_rows_is_an_error(tmp_path):
    assert "None of the rows" in error(tmp_path, "a,b,y\n1,2\n3,4\n")


def test_a_trailing_delimiter_is_not_an_extra_field(tmp_path):
    table = read(tmp_path, "a,b,y,\n1,2,x,\n3,4,y\n5,6,x,,\n7,8,y\n")
    assert table.info.num_samples == 4 and table.notes == []


def test_utf8_bom_and_whitespace_are_stripped(tmp_path):
    table = read(tmp_path, "\ufeff a , b ,label\r\n 1 , 2 , x \r\n3,4,y\r\n")
    assert table.samples.columns == ["a", "b"]
    assert table.info.class_names == ("x", "y")


def test_semicolons_with_decimal_commas(tmp_path):
    table = read(tmp_path, "a;b;y\n1,5;2;x\n-0,25;4;y\n")
    np.testing.assert_allclose(table.samples.features, [[1.5, 2], [-0.25, 4]])
    assert table.report["delimiter"] == "semicolon"
    assert any("decimal comma" in n for n in table.notes)


def test_tabs_and_quoted_commas(tmp_path):
    table = read(tmp_path, 'a\tb\ty\n1\t2\t"big, red"\n3\t4\tsmall\n')
    assert table.report["delimiter"] == "tab"
    assert table.info.class_names == ("big, red", "small")


def test_latin1_file_is_read_with_a_note(tmp_path):
    path = write(tmp_path, "a,y\n1,café\n2,thé\n", encoding="latin-1")
    table = read_table(choice(path))
    assert table.info.class_names == ("café", "thé")
    assert any("Latin-1" in n for n in table.notes)
    assert table.report["encoding"] == "latin-1"


def test_utf16_file_with_bom(tmp_path):
    table = read_table(choice(write(tmp_path, IRIS, encoding="utf-16")))
    assert table.info.num_samples == 6


def test_binary_file_is_not_a_csv(tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    with pytest.raises(DataError, match="data.csv is not a CSV file"):
        read_table(choice(path))


def test_missing_file_folder_and_no_path(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_table(choice(tmp_path / "nope.csv"))
    with pytest.raises(DataError, match="is a folder"):
        read_table(choice(tmp_path))
    with pytest.raises(DataError, match="No CSV file is chosen"):
        read_table(choice(""))


def test_empty_and_repeated_column_names_are_renamed(tmp_path):
    table = read(tmp_path, "a,,a,y\n1,2,3,x\n4,5,6,y\n")
    assert table.samples.columns == ["a", "column 2", "a (2)"]
    assert any("renamed" in n for n in table.notes)


@pytest.mark.parametrize(("text", "encoding", "names"), [
    ("\ufeff a , b ,label\r\n1,2,x\r\n3,4,y\r\n", "utf-8", ["a", "b", "label"]),
    ("a,,a,y\n1,2,3,x\n4,5,6,y\n", "utf-8", ["a", "column 2", "a (2)", "y"]),
    ('"x, cm";"y, cm";kind\n1,5;2;p\n3;4,5;q\n', "utf-8", ["x, cm", "y, cm", "kind"]),
    ("\n \nwidth\tkind\n1\tp\n2\tq\n", "utf-8", ["width", "kind"]),
    ("a,b,y,\n1,2,x,\n3,4,y\n", "utf-8", ["a", "b", "y"]),
    ("prix,catégorie\n1,bas\n9,haut\n", "latin-1", ["prix", "catégorie"]),
    (IRIS, "utf-16", ["length", "width", "species"]),
])
def test_csv_columns_names_the_columns_as_reading_does(tmp_path, text, encoding, names):
    path = write(tmp_path, text, encoding=encoding)
    assert csv_columns(path) == names
    assert read_table(choice(path)).report["columns"] == names


def test_csv_columns_of_an_unusable_file_is_an_error(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        csv_columns(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="empty"):
        csv_columns(write(tmp_path, "\n \n"))
    with pytest.raises(DataError, match="only separators"):
        csv_columns(write(tmp_path, ",,\n , \n"))


def test_text_mode(tmp_path):
    text = 'id,review,stars\n1,"Great, loved it",good\n2,"Awful\nreally",bad\n3,,good\n'
    table = read(tmp_path, text, text_column="review", sequence_length=7)
    assert isinstance(table.samples, TextSamples)
    assert table.samples.texts == ["Great, loved it", "Awful\nreally"]
    assert table.info.kind == "text" and table.info.sample_shape == (7,)
    assert table.info.class_names == ("bad", "good")
    assert "1 row has no text in 'review' and was skipped; the first is line 5." in table.notes
    assert any("'id'" in n and "left out" in n for n in table.notes)


def test_text_regression(tmp_path):
    table = read(tmp_path, "text,score\nfine,3\nbad,1\n", text_column="text", task="regression")
    assert table.info.kind == "text" and table.labels.tolist() == [3.0, 1.0]


def test_warnings_about_classes_and_constant_columns(tmp_path):
    rows = [f"{i},1,{'a' if i < 10 else 'b'}" for i in range(11)]
    table = read(tmp_path, "x,same,y\n" + "\n".join(rows) + "\n")
    problems = table.report["problems"]
    assert any("strongly imbalanced: 'a' has 10 rows, 'b' only 1" in p for p in problems)
    assert any("single row ('b')" in p for p in problems)
    assert any("'same' has the same value in every row" in p for p in problems)
    assert set(problems) <= set(table.notes)


def test_many_distinct_labels_suggest_regression(tmp_path):
    rows = [f"{i},{i * 1.5}" for i in range(30)]
    table = read(tmp_path, "x,price\n" + "\n".join(rows) + "\n")
    assert any("choose regression" in p for p in table.report["problems"])


def test_report_is_json(tmp_path):
    report = table_report(choice(write(tmp_path, "a,city,y\n1,Paris,x\n,Rome,y\n2,Oslo,x\n")))
    assert json.loads(json.dumps(report)) == report
    assert report["rows"] == 3 and report["features"] == ["a"]
    assert report["left_out"] == [{"column": "city", "reason": "text"}]
    assert report["classes"] == [{"name": "x", "rows": 2}, {"name": "y", "rows": 1}]
    assert report["columns"] == ["a", "city", "y"] and report["label_column"] == "y"


def test_repeated_reads_come_from_the_cache_until_the_file_changes(tmp_path):
    path = write(tmp_path, IRIS)
    first = read_table(choice(path))
    assert read_table(choice(path)).samples is first.samples
    assert read_table(choice(path, label_column="width")).samples is not first.samples
    path.write_text(IRIS + "9,10,setosa\n")
    assert table_info(choice(path)).num_samples == 7


def test_errors_are_remembered_and_sequence_length_needs_no_reread(tmp_path):
    path = write(tmp_path, "t,y\nhi,a\nho,b\n")
    for _ in range(2):
        with pytest.raises(DataError, match="no column of numbers"):
            table_info(choice(path))
    first = read_table(choice(path, text_column="t", sequence_length=3))
    again = read_table(choice(path, text_column="t", sequence_length=9))
    assert again.samples is first.samples and again.info.sample_shape == (9,)


def test_progress_and_cancel(tmp_path):
    path = write(tmp_path, "a,y\n" + "".join(f"{i},{i % 2}\n" for i in range(12_000)))
    seen = []
    read_table(choice(path), lambda what, done, total: seen.append((what, done, total)))
    assert seen[0][0] == "Reading data.csv" and len(seen) >= 3
    assert seen[-1][1] == seen[-1][2]
    stop = threading.Event()
    stop.set()
    with pytest.raises(DataError, match="cancelled"):
        read_table(choice(path, label_column="a", task="regression"), stop=stop)
    assert read_table(choice(path, label_column="a", task="regression")).info.num_samples == 12_000


def test_describe_and_load_read_csv_sources(tmp_path):
    rows = [f"{i},{i % 3}" for i in range(30)]
    path = write(tmp_path, "x,y\n" + "\n".join(rows) + "\n")
    csv_choice = choice(path, validation_split=0.2, test_split=0.1)
    assert describe(csv_choice).num_classes == 3
    loaded = load(csv_choice)
    assert isinstance(loaded.samples, TableSamples)
    assert loaded.size("train") + loaded.size("validation") + loaded.size("test") == 30
    assert loaded.class_counts("validation") == [2, 2, 2]


def test_describe_without_reading_waits_for_a_csv_read_elsewhere(tmp_path, monkeypatch):
    path = write(tmp_path, IRIS)
    text_choice = choice(path, text_column="species", label_column="length",
                         sequence_length=7, max_tokens=50)
    parsed: list[str] = []
    real_read_rows = table_data._read_rows

    def recording_read_rows(*args):
        parsed.append(args[0].name)
        return real_read_rows(*args)

    monkeypatch.setattr(table_data, "_read_rows", recording_read_rows)
    for pending in (choice(path), text_choice):
        with pytest.raises(DataPending, match=r"^data\.csv is being read…$"):
            describe(pending, read=False)
    assert parsed == []
    load(choice(path))
    assert describe(choice(path), read=False) == describe(choice(path))
    read_table(text_choice)
    info = describe(text_choice, read=False)
    assert (info.kind, info.sample_shape, info.vocabulary_size) == ("text", (7,), 50)
    assert parsed == ["data.csv", "data.csv"]  # each choice read once, by load or read_table

    path.write_text(IRIS + "9,10,setosa\n")  # changed on disk: read again before it is known
    with pytest.raises(DataPending):
        describe(choice(path), read=False)
    bad = write(tmp_path, "t,y\nhi,a\nho,b\n", name="words.csv")
    with pytest.raises(DataError, match="no column of numbers"):
        read_table(choice(bad))
    for unusable, message in ((bad, "no column of numbers"), (tmp_path / "gone.csv",
                                                               "does not exist"), ("", "No CSV")):
        with pytest.raises(DataError, match=message) as caught:  # known at once: not pending
            describe(choice(unusable), read=False)
        assert not isinstance(caught.value, DataPending)
    assert parsed == ["data.csv", "data.csv", "words.csv", "gone.csv"]  # gone: failed at once
