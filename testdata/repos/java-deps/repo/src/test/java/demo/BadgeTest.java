package demo;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

import org.junit.Test;

public class BadgeTest {
    @Test
    public void greets() {
        assertTrue(Badge.of("ada").startsWith("Hello, "));
    }

    @Test
    public void titleCase() {
        assertEquals("Hello, Ada Lovelace", Badge.of("ada lovelace"));
    }
}
