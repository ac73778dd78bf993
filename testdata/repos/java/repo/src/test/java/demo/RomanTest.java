package demo;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class RomanTest {
    @Test
    public void additive() {
        assertEquals("XVII", Roman.of(17));
    }

    @Test
    public void thousands() {
        assertEquals("MMM", Roman.of(3000));
    }

    @Test(expected = IllegalArgumentException.class)
    public void rejectsZero() {
        Roman.of(0);
    }
}
