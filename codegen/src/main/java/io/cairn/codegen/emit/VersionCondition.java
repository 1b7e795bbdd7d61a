package io.cairn.codegen.emit;

import io.cairn.codegen.schema.Versions;

import java.util.function.Consumer;

/**
 * Emits the smallest {@code if} that tells whether {@code _version} is in a wanted range, given the versions that
 * can reach this point of the generated code: nothing when all of them are in it (or none), {@code _version >= n}
 * or {@code _version <= n} when one bound suffices, both otherwise. Each branch is emitted with the versions that
 * reach it, so nested conditions stay minimal too. Stateless and thread-safe.
 */
public final class VersionCondition {

    private VersionCondition() {
    }

    /**
     * Emits {@code ifMember} for the versions of {@code context} inside {@code wanted} and {@code ifNotMember}
     * (which may be null) for the others.
     */
    public static void emit(CodeBuffer buffer, Versions wanted, Versions context, Consumer<Versions> ifMember,
            Consumer<Versions> ifNotMember) {
        Versions inside = wanted.intersect(context);
        if (inside.isEmpty()) {
            if (ifNotMember != null) {
                ifNotMember.accept(context);
            }
            return;
        }
        if (inside.equals(context)) {
            ifMember.accept(context);
            return;
        }
        boolean checkLow = inside.lowest() > context.lowest();
        boolean checkHigh = inside.highest() < context.highest();
        String condition;
        Versions outside;
        if (checkLow && checkHigh) {
            condition = "(_version >= " + inside.lowest() + ") && (_version <= " + inside.highest() + ")";
            outside = context;
        } else if (checkLow) {
            condition = "_version >= " + inside.lowest();
            outside = new Versions(context.lowest(), (short) (inside.lowest() - 1));
        } else {
            condition = "_version <= " + inside.highest();
            outside = new Versions((short) (inside.highest() + 1), context.highest());
        }
        buffer.open("if (%s)", condition);
        ifMember.accept(inside);
        if (ifNotMember != null) {
            buffer.reopen("else");
            ifNotMember.accept(outside);
        }
        buffer.close();
    }

    /** The condition alone, for use inside larger expressions: {@code "true"} when every context version is in. */
    public static String expression(Versions wanted, Versions context) {
        Versions inside = wanted.intersect(context);
        if (inside.isEmpty()) {
            return "false";
        }
        if (inside.equals(context)) {
            return "true";
        }
        boolean checkLow = inside.lowest() > context.lowest();
        boolean checkHigh = inside.highest() < context.highest();
        if (checkLow && checkHigh) {
            return "(_version >= " + inside.lowest() + " && _version <= " + inside.highest() + ")";
        }
        return checkLow ? "_version >= " + inside.lowest() : "_version <= " + inside.highest();
    }
}
