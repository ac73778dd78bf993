require "slug"

class TestSlug < Minitest::Test
  def test_spaces
    assert_equal "a-title", Slug.make("A Title")
  end
end
