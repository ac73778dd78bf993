require "textkit"

RSpec.describe Textkit do
  describe ".titleize" do
    it "capitalizes every word" do
      expect(Textkit.titleize("hello big world")).to eq("Hello Big World")
    end
  end

  describe ".truncate" do
    it "keeps short text" do
      expect(Textkit.truncate("short", 10)).to eq("short")
    end
  end
end
