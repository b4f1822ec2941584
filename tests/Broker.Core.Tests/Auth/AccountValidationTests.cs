using Broker.Core.Auth;
using Broker.TestKit;
using NATS.NKeys;

namespace Broker.Core.Tests.Auth;

/// <summary>
/// What <see cref="BrokerOptions.Validate"/> refuses about accounts, each case beside the nats-server config that says
/// the same: the text is compared with what nats-server 2.9.10 prints for it (<c>-t</c> checks the file; the
/// <c>no_auth_user</c> checks run only at start, so those start it), without its <c>file:line:col</c> (the host adds
/// positions to ours).
/// </summary>
public sealed class AccountValidationTests : IDisposable
{
    private static readonly string UserKey = KeyPair.CreatePair(PrefixByte.User).GetPublicKey();
    private static readonly string AccountKey = KeyPair.CreatePair(PrefixByte.Account).GetPublicKey();

    private static readonly Dictionary<string, (Action<BrokerOptions> Configure, string Conf, bool AtStart, string Expected)> Cases = new()
    {
        ["reserved-global"] = (
            o => o.Accounts.Add(Account("$G", User("a"))),
            "accounts { \"$G\": { users: [{user: a, password: a}] } }", false,
            "\"$G\" is a Reserved Account"),
        ["duplicate-account"] = (
            o =>
            {
                o.Accounts.Add(Account("A"));
                o.Accounts.Add(Account("A"));
            },
            "accounts [ A, A ]", false,
            "Duplicate Account Entry: A"),
        ["duplicate-user-across-accounts"] = (
            o =>
            {
                o.Accounts.Add(Account("A", User("a")));
                o.Accounts.Add(Account("B", User("a")));
            },
            "accounts { A: { users: [{user: a, password: a}] }, B: { users: [{user: a, password: a}] } }", false,
            "Duplicate user \"a\" detected"),
        ["duplicate-user-with-authorization"] = (
            o =>
            {
                o.Authorization.Users.Add(User("a"));
                o.Accounts.Add(Account("A", User("a")));
            },
            "authorization { users: [{user: a, password: a}] }\naccounts { A: { users: [{user: a, password: a}] } }", false,
            "Duplicate user \"a\" detected"),
        ["duplicate-nkey-across-accounts"] = (
            o =>
            {
                o.Accounts.Add(Account("A", new UserOptions { Nkey = UserKey }));
                o.Accounts.Add(Account("B", new UserOptions { Nkey = UserKey }));
            },
            $"accounts {{ A: {{ users: [{{nkey: {UserKey}}}] }}, B: {{ users: [{{nkey: {UserKey}}}] }} }}", false,
            $"Duplicate nkey \"{UserKey}\" detected"),
        ["account-nkey-not-a-key"] = (
            o => o.Accounts.Add(new AccountOptions { Name = "A", Nkey = "x" }),
            "accounts { A: { nkey: \"x\" } }", false,
            "Not a valid public nkey for an account: \"x\""),
        ["account-nkey-of-a-user"] = (
            o => o.Accounts.Add(new AccountOptions { Name = "A", Nkey = UserKey }),
            $"accounts {{ A: {{ nkey: {UserKey} }} }}", false,
            $"Not a valid public nkey for an account: \"{UserKey}\""),
        ["single-user-and-accounts"] = (
            o =>
            {
                o.Authorization.User = "x";
                o.Authorization.Password = "y";
                o.Accounts.Add(Account("A", User("a")));
            },
            "authorization { user: x, password: y }\naccounts { A: { users: [{user: a, password: a}] } }", false,
            "Can not have a single user/pass and accounts"),
        ["token-and-accounts"] = (
            o =>
            {
                o.Authorization.Token = "abc";
                o.Accounts.Add(Account("A", User("a")));
            },
            "authorization { token: abc }\naccounts { A: { users: [{user: a, password: a}] } }", false,
            "Can not have a token and accounts"),
        ["no-auth-user-unknown"] = (
            o =>
            {
                o.Authorization.NoAuthUser = "zz";
                o.Accounts.Add(Account("A", User("a")));
            },
            "no_auth_user: zz\naccounts { A: { users: [{user: a, password: a}] } }", true,
            "no_auth_user: \"zz\" not present as user in authorization block or account configuration"),
        ["no-auth-user-without-users"] = (
            o =>
            {
                o.Authorization.NoAuthUser = "zz";
                o.Accounts.Add(Account("A"));
            },
            "no_auth_user: zz\naccounts { A: { } }", true,
            "no_auth_user: \"zz\" present, but users are not defined"),
    };

    private readonly string directory = Directory.CreateTempSubdirectory("broker-accounts-").FullName;

    // nats-server reads the top-level keys in Go's random map order: when `authorization` comes first it reports the
    // users-array text for these two cases, so either of its texts is its answer (ours is the first, checked elsewhere).
    private static readonly Dictionary<string, string> OtherReferenceText = new(StringComparer.Ordinal)
    {
        ["single-user-and-accounts"] = "Can not have a single user/pass and a users array",
        ["token-and-accounts"] = "Can not have a token and a users array",
    };

    public static TheoryData<string> Names => [.. Cases.Keys];

    public void Dispose() => Directory.Delete(directory, recursive: true);

    private static AccountOptions Account(string name, params UserOptions[] users) => new() { Name = name, Users = [.. users] };

    private static UserOptions User(string name) => new() { User = name, Password = name };

    [Theory]
    [MemberData(nameof(Names))]
    public void Options_are_refused_with_nats_servers_text(string name)
    {
        var (configure, _, _, expected) = Cases[name];
        var options = new BrokerOptions();
        configure(options);

        var error = Assert.Throws<InvalidOperationException>(options.Validate);
        Assert.Equal(expected, error.Message);
    }

    [Theory(Timeout = 30_000)]
    [MemberData(nameof(Names))]
    public async Task Nats_server_refuses_the_same_config_with_the_same_text(string name)
    {
        var (_, conf, atStart, expected) = Cases[name];
        var file = Path.Combine(directory, name + ".conf");
        await File.WriteAllTextAsync(file, conf + "\n");
        var binary = ReferenceServer.BinaryPath ?? throw new InvalidOperationException("nats-server (the Go reference) is not installed; ./scripts/test.sh installs it.");
        string[] arguments = atStart ? ["-a", "127.0.0.1", "-p", Ports.GetFreePort().ToString(System.Globalization.CultureInfo.InvariantCulture), "-c", file] : ["-t", "-c", file];

        var result = await ExternalProcess.RunAsync(binary, arguments, TimeSpan.FromSeconds(20));

        Assert.True(result.ExitCode == 1, result.ToString());
        var first = result.ErrorText.Split('\n')[0].TrimEnd('\r');

        // "nats-server: " then, for a problem in the file, "file:line:col: ".
        var text = first["nats-server: ".Length..];
        if (text.StartsWith(file, StringComparison.Ordinal))
        {
            text = text[(text.IndexOf(": ", file.Length, StringComparison.Ordinal) + 2)..];
        }

        if (OtherReferenceText.TryGetValue(name, out var other) && text == other)
        {
            return;
        }

        Assert.Equal(expected, text);
    }

    [Fact]
    public void Accounts_without_users_or_with_distinct_names_are_valid()
    {
        var options = new BrokerOptions();
        options.Authorization.Users.Add(User("g"));
        options.Authorization.NoAuthUser = "b";
        options.Accounts.Add(new AccountOptions { Name = "A", Nkey = AccountKey, Users = [User("a"), new UserOptions { Nkey = UserKey }] });
        options.Accounts.Add(Account("B", User("b")));
        options.Accounts.Add(Account("Empty"));

        options.Validate();
    }

    [Fact]
    public void Account_needs_a_name_and_keeps_the_users_checks()
    {
        var unnamed = new BrokerOptions();
        unnamed.Accounts.Add(Account(""));
        Assert.Equal("accounts: every account needs a name", Assert.Throws<InvalidOperationException>(unnamed.Validate).Message);

        var nameless = new BrokerOptions();
        nameless.Accounts.Add(Account("A", new UserOptions()));
        Assert.Equal("authorization: every user needs a name or an nkey", Assert.Throws<InvalidOperationException>(nameless.Validate).Message);

        var badKey = new BrokerOptions();
        badKey.Accounts.Add(Account("A", new UserOptions { Nkey = AccountKey }));
        Assert.Equal($"authorization: \"{AccountKey}\": Not a valid public nkey for a user", Assert.Throws<InvalidOperationException>(badKey.Validate).Message);

        var badPermissions = new BrokerOptions();
        badPermissions.Accounts.Add(new AccountOptions { Name = "A", DefaultPermissions = new PermissionsOptions { Publish = new SubjectPermissionOptions { Allow = ["a..b"] } } });
        Assert.Throws<InvalidOperationException>(badPermissions.Validate);
    }

    [Fact]
    public void Existing_texts_stay_for_duplicates_within_authorization()
    {
        var options = new BrokerOptions();
        options.Authorization.Users.Add(User("a"));
        options.Authorization.Users.Add(User("a"));
        Assert.Equal("authorization: duplicate user \"a\"", Assert.Throws<InvalidOperationException>(options.Validate).Message);
    }
}
