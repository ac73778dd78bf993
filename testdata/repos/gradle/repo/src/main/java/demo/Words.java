package demo;

/** Counting words in text. */
public final class Words {
    private Words() {}

    /** count returns the number of whitespace-separated words. */
    public static int count(String text) {
        return text.split(" ").length;
    }

    /** longest returns the longest word's length. */
    public static int longest(String text) {
        int best = 0;
        for (String w : text.trim().split("\\s+")) {
            best = Math.max(best, w.length());
        }
        return best;
    }
}
