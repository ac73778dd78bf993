package textcase;

/** Title capitalises words. */
public final class Title {
    private Title() {}

    /** of capitalises the first letter of every word. */
    public static String of(String s) {
        StringBuilder b = new StringBuilder(s.length());
        boolean start = true;
        for (char c : s.toCharArray()) {
            b.append(start ? Character.toUpperCase(c) : c);
            start = !Character.isLetterOrDigit(c);
        }
        return b.toString();
    }
}
