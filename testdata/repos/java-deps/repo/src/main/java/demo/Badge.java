package demo;

/** Badge makes the text of name badges. */
public final class Badge {
    private Badge() {}

    /** of is the text of a name badge. */
    public static String of(String name) {
        return "Hello, " + name;
    }
}
