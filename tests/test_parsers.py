"""Each parser on a small archive in its dataset's canonical layout, and bad input."""

import gzip
import io
import tarfile
import zipfile

import pytest

from attnlearn.data.parsers import PARSERS, DataError


def make_tar(path, files: dict[str, str | bytes]):
    with tarfile.open(path, "w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def make_zip(path, files):
    with zipfile.ZipFile(path, "w") as z:
        for name, content in files.items():
            z.writestr(name, content)
    return path


def test_imdb(tmp_path):
    files = {f"aclImdb/{split}/{pol}/{i}_{7 if pol == 'pos' else 2}.txt": f"A {pol} film.<br /><br />Truly {i}."
             for split in ("train", "test") for pol in ("pos", "neg") for i in range(3)}
    files["aclImdb/train/unsup/0_0.txt"] = "unlabelled"
    files["aclImdb/README"] = "readme"
    out = PARSERS["imdb"]({"archive": make_tar(tmp_path / "imdb.tar.gz", files)}, {"max_valid": 4})
    assert len(out["train"]) == 6 and len(out["test"]) == 6 and len(out["valid"]) == 4
    assert "<br" not in " ".join(out["train"]["text"])
    assert sorted(out["train"]["label"]) == [0, 0, 0, 1, 1, 1]
    assert (out["train"]["label"] == out["train"]["text"].str.contains("pos").astype(int)).all()


def test_ag_news_keeps_world_and_business(tmp_path):
    rows = '"1","Wall St. Bears","Short-sellers see 2004 gains"\n"2","Sports","x"\n' \
           '"3","Oil prices","Prices rose 15 percent in 2 days"\n"4","Tech","y"\n'
    (tmp_path / "train.csv").write_text(rows * 2)
    (tmp_path / "test.csv").write_text(rows)
    out = PARSERS["ag_news"]({"train": tmp_path / "train.csv", "test": tmp_path / "test.csv"},
                             {"unk_integers": True})
    assert len(out["train"]) == 4 and len(out["test"]) == 2
    assert list(out["test"]["label"]) == [0, 1]
    assert "<unk>" in out["test"]["text"][0] and " 2 " in out["test"]["text"][1]  # single digits kept


def test_ag_news_bad_row_names_file_and_line(tmp_path):
    (tmp_path / "train.csv").write_text('"1","a","b"\n"3","only two"\n')
    (tmp_path / "test.csv").write_text('"1","a","b"\n')
    with pytest.raises(DataError, match=r"train.csv: line 2 has 2 fields"):
        PARSERS["ag_news"]({"train": tmp_path / "train.csv", "test": tmp_path / "test.csv"}, {})


def test_amazon_sorted_data_acl(tmp_path):
    def review(text):
        return f"<review>\n<rating>\n5.0\n</rating>\n<review_text>\n{text}\n</review_text>\n</review>\n"
    files = {f"sorted_data_acl/{d}/{pol}.review": review(f"{pol} {d} item") + review("word " * 500)
             for d in ("books", "dvd") for pol in ("positive", "negative")}
    files["sorted_data_acl/books/unlabeled.review"] = review("ignored")
    out = PARSERS["amazon"]({"archive": make_tar(tmp_path / "a.tar.gz", files)}, {"n_valid": 1})
    assert len(out["train"]) + len(out["valid"]) == 4  # the 500-word reviews are dropped
    assert len(out["valid"]) == 1 and len(out["test"]) == 0


def test_yelp_polarity(tmp_path):
    csv = '"1","Awful.\\nNever again."\n"2","Great \\"tacos\\"!"\n'
    files = {"yelp_review_polarity_csv/train.csv": csv * 3, "yelp_review_polarity_csv/test.csv": csv,
             "yelp_review_polarity_csv/readme.txt": "x"}
    out = PARSERS["yelp_polarity"]({"archive": make_tar(tmp_path / "y.tgz", files)}, {})
    assert len(out["train"]) == 6 and list(out["test"]["label"]) == [0, 1]
    assert "\\n" not in out["test"]["text"][0] and "tacos" in out["test"]["text"][1]


def test_news_commentary_split_and_cleaning(tmp_path):
    lines = [f"Sentence number {i} .\tZin nummer {i} ." for i in range(50)]
    lines += ["1990\t1990", "12.5%\t12,5%", "\tlege bron", "empty target\t"]
    path = tmp_path / "news.tsv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    out = PARSERS["news_commentary"]({"corpus": path}, {"valid_fraction": 0.1, "seed": 0})
    assert len(out["train"]) == 45 and len(out["valid"]) == 5 and len(out["test"]) == 0
    both = set(out["train"]["src"]) | set(out["valid"]["src"])
    assert "1990" not in both and "12.5%" not in both
    again = PARSERS["news_commentary"]({"corpus": path}, {"valid_fraction": 0.1, "seed": 0})
    assert again["valid"].equals(out["valid"])


def test_news_commentary_bad_line(tmp_path):
    path = tmp_path / "news.tsv.gz"
    with gzip.open(path, "wt") as f:
        f.write("a\tb\nno tab here\n")
    with pytest.raises(DataError, match="line 2 has 1 columns"):
        PARSERS["news_commentary"]({"corpus": path}, {})


def test_iwslt14_fairseq_preparation(tmp_path):
    pytest.importorskip("sacremoses")
    meta = ["<url>http://www.ted.com/talks/x</url>", "<keywords>talks</keywords>", "<speaker>Someone</speaker>",
            "<talkid>1</talkid>"]
    de = meta + [f"<title>Titel {i}</title>" if i == 0 else f"Das ist Satz Nummer {i}, nicht wahr?"
                 for i in range(60)]
    en = meta + [f"<title>Title {i}</title>" if i == 0 else f"This is sentence number {i}, right?"
                 for i in range(60)]
    def xml(lang, n):
        return "<mteval>\n" + "\n".join(f'<seg id="{i}"> {lang} Test {i} </seg>' for i in range(n)) + "\n</mteval>\n"
    files = {"de-en/train.tags.de-en.de": "\n".join(de) + "\n", "de-en/train.tags.de-en.en": "\n".join(en) + "\n"}
    for name in ("TED.dev2010", "TEDX.dev2012", "TED.tst2010", "TED.tst2011", "TED.tst2012"):
        files[f"de-en/IWSLT14.{name}.de-en.de.xml"] = xml("Ein", 2)
        files[f"de-en/IWSLT14.{name}.de-en.en.xml"] = xml("A", 2)
    out = PARSERS["iwslt14"]({"archive": make_tar(tmp_path / "de-en.tgz", files)}, {})
    assert len(out["train"]) + len(out["valid"]) == 60 and len(out["valid"]) == 60 // 23
    assert len(out["test"]) == 10
    assert out["train"]["src"][0] == "titel 0"  # tags stripped, lower-cased
    assert out["train"]["src"][1] == "das ist satz nummer 1 , nicht wahr ?"  # Moses-tokenized


def test_parallel_files_with_mismatched_line_counts(tmp_path):
    def tar(name, prefix, n_de, n_en):
        return make_tar(tmp_path / name, {f"{prefix}.de": "x\n" * n_de, f"{prefix}.en": "y\n" * n_en})
    files = {"train": tar("t.tar.gz", "train", 5, 4), "valid": tar("v.tar.gz", "val", 2, 2),
             "test": tar("s.tar.gz", "test2016", 2, 2)}
    with pytest.raises(DataError, match=r"different line counts \(5 vs 4\)") as err:
        PARSERS["multi30k"](files, {})
    assert "t.tar.gz" in str(err.value)


def test_empty_file(tmp_path):
    empty = make_zip(tmp_path / "sms.zip", {"SMSSpamCollection": ""})
    with pytest.raises(DataError, match="no examples"):
        PARSERS["sms_spam"]({"archive": empty}, {})
    (tmp_path / "empty.tar.gz").write_bytes(b"")
    with pytest.raises(DataError, match="empty.tar.gz"):
        PARSERS["imdb"]({"archive": tmp_path / "empty.tar.gz"}, {})


def test_truncated_archive(tmp_path):
    files = {f"aclImdb/train/pos/{i}_9.txt": "good " * 2000 + str(i) for i in range(40)}
    whole = make_tar(tmp_path / "whole.tar.gz", files).read_bytes()
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(DataError, match="cut.tar.gz: truncated or corrupt"):
        PARSERS["imdb"]({"archive": cut}, {})


def test_sms_bad_line_is_named(tmp_path):
    z = make_zip(tmp_path / "sms.zip", {"SMSSpamCollection": "ham\tok\nspamm\tbad\n"})
    with pytest.raises(DataError, match="line 2"):
        PARSERS["sms_spam"]({"archive": z}, {})


def test_sst_root_label_outside_0_to_4_is_refused_with_file_and_line(tmp_path):
    tree = "(3 (2 good) (3 film))\n"
    files = {"trees/train.txt": tree + "(7 (2 bad) (3 label))\n", "trees/dev.txt": tree, "trees/test.txt": tree}
    with pytest.raises(DataError, match=r"sst.zip:trees/train.txt: line 2 has root label 7; SST's labels are 0-4"):
        PARSERS["sst"]({"archive": make_zip(tmp_path / "sst.zip", files)}, {})


def test_multi30k_empty_sentence_is_refused_with_file_and_line(tmp_path):
    def tar(name, prefix, de, en):
        return make_tar(tmp_path / name, {f"{prefix}.de": de, f"{prefix}.en": en})
    files = {"train": tar("t.tar.gz", "train", "a\n \nc\n", "x\ny\nz\n"), "valid": tar("v.tar.gz", "val", "a\n", "x\n"),
             "test": tar("s.tar.gz", "test2016", "a\n", "x\n")}
    with pytest.raises(DataError, match=r"t.tar.gz:train.de: line 2 is empty"):
        PARSERS["multi30k"](files, {})


def test_sms_messages_without_words_are_dropped_and_counted(tmp_path, capsys):
    lines = [f"ham\tmessage number {i}" for i in range(6)] + ["ham\t:) ", "spam\tWIN now", "ham\t"]
    z = make_zip(tmp_path / "sms.zip", {"SMSSpamCollection": "\n".join(lines) + "\n"})
    out = PARSERS["sms_spam"]({"archive": z}, {"n_train": 4})
    assert len(out["train"]) == 4 and len(out["valid"]) == 3 and (out["train"]["text"] != "").all()
    assert "dropped 2 message(s) with no word after tokenization (lines [7, 9])" in capsys.readouterr().out


def test_twenty_newsgroups_keeps_headers_unless_told_to_strip_them(tmp_path):
    """Two groups -> labels in config order; a post's header block (to the first blank line)
    is kept as the reference kept it, and dropped with strip_headers (the question: do header
    words such as `subject` draw the attention?)."""
    post = "From: fan@example.org\nSubject: Penguins in overtime\nLines: 2\n\nWhat a game {i}.\nGo team."
    files = {f"20news-bydate-{split}/{group}/{i}": post.format(i=i) for split in ("train", "test")
             for group in ("rec.sport.baseball", "rec.sport.hockey", "sci.space") for i in range(3)}
    archive = make_tar(tmp_path / "20news-bydate.tar.gz", files)
    options = {"groups": ["rec.sport.hockey", "rec.sport.baseball"]}
    kept = PARSERS["twenty_newsgroups"]({"archive": archive}, options)
    stripped = PARSERS["twenty_newsgroups"]({"archive": archive}, {**options, "strip_headers": True})
    assert len(kept["train"]) == len(stripped["train"]) == 6 and sorted(kept["train"]["label"]) == [0] * 3 + [1] * 3
    assert kept["train"]["text"].str.startswith("from fan example org subject penguins").all()  # lowercased words
    assert not stripped["train"]["text"].str.contains("subject|from|lines|penguins").any()
    assert stripped["train"]["text"].str.startswith("what a game").all()


def test_header_lengths_count_each_posts_header_words_in_the_prepared_order(tmp_path):
    """attnlearn.data.headers (does alpha* pick header words?): a post's header is its words
    up to the first blank line, counted per post in the order prepare_data writes the split
    (shuffled), so that positions 1..h of each tokenized post are its header's."""
    import hashlib

    import numpy as np

    from attnlearn.data.headers import header_lengths, header_mask
    from attnlearn.data.prepare import prepare

    files = {}
    for split in ("train", "test"):
        for i in range(6):  # header i + 2 words long ("from", i + 1 names); bodies of 3 words
            head = "From: " + " ".join(f"n{j}" for j in range(i + 1))
            files[f"20news-bydate-{split}/rec.sport.hockey/{i}"] = f"{head}\n\nbody of {i}\n\nmore"
    archive = make_tar(tmp_path / "20news-bydate.tar.gz", files)
    source = {"kind": "twenty_newsgroups", "options": {"groups": ["rec.sport.hockey"]},
              "files": {"archive": {"url": "http://x/a.tar.gz", "sha256": hashlib.sha256(archive.read_bytes()).hexdigest()}}}
    lengths = header_lengths(source, {"archive": archive})
    valid = prepare(source, {"archive": archive})["valid"]["text"]
    assert list(valid.str.split().map(len) - 4) == list(lengths) and sorted(lengths) == [2, 3, 4, 5, 6, 7]
    assert list(lengths) != sorted(lengths)  # shuffled: a parse in archive order would not match
    assert all(t.split()[h:][:2] == ["body", "of"] for t, h in zip(valid, lengths))
    mask = header_mask(np.asarray(lengths), np.array([0, 0]), 10)
    assert mask[0].tolist() == [False] + [True] * lengths[0] + [False] * (9 - lengths[0])  # <s> at 0
