package dev.imexprobe.cli;

/** Placeholder entry point; commands arrive with the check command. */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        System.err.println("usage: imexprobe check|serve|ladder|worker|demo");
        System.exit(64);
    }
}
