from badges import badge


def test_greets():
    assert badge("ada").startswith("Hello, ")


def test_title_case():
    assert badge("ada lovelace") == "Hello, Ada Lovelace"
