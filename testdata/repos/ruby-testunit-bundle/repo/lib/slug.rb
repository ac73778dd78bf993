# Slug makes URL slugs of titles.
module Slug
  def self.make(title)
    title.downcase.strip.tr(" ", "-")
  end
end
