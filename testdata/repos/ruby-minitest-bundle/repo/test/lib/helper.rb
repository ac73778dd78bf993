require "minitest/autorun"
