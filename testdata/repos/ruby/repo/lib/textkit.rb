# Small text helpers.
module Textkit
  # truncate shortens text to at most max characters, ending in "...".
  def self.truncate(text, max)
    return text if text.length <= max

    text[0, max] + "..."
  end

  # titleize capitalizes every word.
  def self.titleize(text)
    text.split(" ").map(&:capitalize).join(" ")
  end
end
