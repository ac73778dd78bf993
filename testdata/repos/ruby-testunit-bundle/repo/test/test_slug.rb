require "slug"

class TestSlug < Test::Unit::TestCase
  def test_spaces
    assert_equal "a-title", Slug.make("A Title")
  end
end
