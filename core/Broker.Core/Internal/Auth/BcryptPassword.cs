namespace Broker.Core.Internal.Auth;

/// <summary>
/// bcrypt password hashes (<c>$2a$</c>, <c>$2b$</c>, <c>$2x$</c>, <c>$2y$</c>) as nats-server accepts them for passwords
/// and tokens: recognised by nats-server's rule, verified by BCrypt.Net-Next. The password is its UTF-8 bytes plus a
/// NUL terminator, cut at 72 bytes, as Go's <c>x/crypto/bcrypt</c> (used by nats-server) does; the prefixes differ only
/// in historic bugs of other implementations, so all are verified the same way, <c>$2x$</c> included (as Go does).
/// </summary>
internal static class BcryptPassword
{
    /// <summary>
    /// Whether a configured password or token is a bcrypt hash, by nats-server's rule (<c>auth.go isBcrypt</c>):
    /// it starts with <c>$2a$</c>, <c>$2b$</c>, <c>$2x$</c> or <c>$2y$</c> followed by two digits and <c>$</c>.
    /// Such a value is always verified as bcrypt, so a malformed one matches no password.
    /// </summary>
    public static bool IsHash(string? value) =>
        value is { Length: >= 7 }
        && value[0] == '$' && value[1] == '2' && value[2] is 'a' or 'b' or 'x' or 'y' && value[3] == '$'
        && char.IsAsciiDigit(value[4]) && char.IsAsciiDigit(value[5]) && value[6] == '$';

    /// <summary>
    /// Checks a password against a bcrypt hash in constant time; a malformed hash yields <see langword="false"/>.
    /// It costs what the hash's cost says (about 100 ms at cost 11), on the caller's thread.
    /// </summary>
    public static bool Verify(string? password, string? hash)
    {
        if (password is null || hash is null || !IsHash(hash))
        {
            return false;
        }

        try
        {
            return BCrypt.Net.BCrypt.Verify(password, hash);
        }
        catch (Exception ex) when (ex is BCrypt.Net.SaltParseException or ArgumentException or FormatException or IndexOutOfRangeException)
        {
            return false;
        }
    }
}
