require "test/unit"
