from slugify_lite import slugify


def test_lowercases():
    assert slugify("Hello") == "hello"


def test_joins_words():
    assert slugify("hello world") == "hello-world"


def test_keeps_digits():
    assert slugify("route 66") == "route-66"
