package demo;

/** Roman numerals. */
public final class Roman {
    private static final int[] VALUES = {1000, 500, 100, 50, 10, 5, 1};
    private static final String[] SYMBOLS = {"M", "D", "C", "L", "X", "V", "I"};

    private Roman() {}

    /** The Roman numeral of n, for 1 to 3999. */
    public static String of(int n) {
        if (n < 1 || n > 3999) {
            throw new IllegalArgumentException("out of range: " + n);
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < VALUES.length; i++) {
            while (n >= VALUES[i]) {
                sb.append(SYMBOLS[i]);
                n -= VALUES[i];
            }
        }
        return sb.toString();
    }
}
