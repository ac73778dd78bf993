package demo;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class WordsTest {
    @Test
    public void countsWords() {
        assertEquals(3, Words.count("one two three"));
    }

    @Test
    public void longestWord() {
        assertEquals(5, Words.longest("a three bb"));
    }
}
