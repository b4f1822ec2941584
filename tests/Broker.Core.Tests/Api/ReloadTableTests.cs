using Broker.Core.Internal.Reload;

namespace Broker.Core.Tests.Api;

public sealed class ReloadTableTests
{
    [Fact]
    public void Every_option_says_how_it_reloads()
    {
        var covered = OptionsComparer.Settings.Select(s => s.Property).ToHashSet();
        var missing = typeof(BrokerOptions).GetProperties().Select(p => p.Name).Where(name => !covered.Contains(name)).ToList();
        Assert.True(missing.Count == 0, "BrokerOptions properties without a reload rule in OptionsComparer: " + string.Join(", ", missing));
    }

    [Fact]
    public void Changed_lists_exactly_the_settings_that_differ()
    {
        var a = new BrokerOptions();
        var b = a.Clone();
        Assert.Empty(OptionsComparer.Changed(a, b));
        b.MaxPayload = 5;
        b.Authorization.Users.Add(new() { User = "x" });
        Assert.Equal(["max_payload", "authorization"], OptionsComparer.Changed(a, b).Select(s => s.Key));
    }

    [Fact]
    public void Changes_are_described_as_nats_server_logs_them()
    {
        var a = new BrokerOptions();
        var b = a.Clone();
        b.MaxPayload = 2 * 1024 * 1024;
        b.PingInterval = TimeSpan.FromSeconds(90);
        b.WriteDeadline = TimeSpan.FromMilliseconds(1500);
        b.Authorization.Users.Add(new() { User = "x", Password = "secret" });
        b.Authorization.Timeout = TimeSpan.FromSeconds(1.5);

        var described = OptionsComparer.Changed(a, b).SelectMany(s => OptionsComparer.Describe(s, a, b)).ToList();

        Assert.Equal(
            ["max_payload = 2097152", "write_deadline = 1.5s", "ping_interval = 1m30s", "authorization timeout = 1.5", "authorization users"],
            described);
        Assert.DoesNotContain(described, d => d.Contains("secret", StringComparison.Ordinal));
    }

    [Fact]
    public void Credential_changes_name_the_part_that_changed_and_never_the_secret()
    {
        var a = new BrokerOptions();
        a.Authorization.User = "alice";
        a.Authorization.Password = "one";
        var b = a.Clone();
        b.Authorization.Password = "two";
        Assert.Equal(["authorization password"], OptionsComparer.Changed(a, b).SelectMany(s => OptionsComparer.Describe(s, a, b)));

        var token = new BrokerOptions();
        token.Authorization.Token = "t";
        Assert.Equal(["authorization token"], OptionsComparer.Changed(new BrokerOptions(), token).SelectMany(s => OptionsComparer.Describe(s, new BrokerOptions(), token)));
    }

    [Fact]
    public void Accounts_reload_live_and_are_described_without_their_users()
    {
        var a = new BrokerOptions();
        a.Accounts.Add(new() { Name = "A", Users = [new() { User = "a", Password = "secret" }] });
        var b = a.Clone();
        Assert.Empty(OptionsComparer.Changed(a, b));

        b.Accounts[0].Users[0].Password = "other-secret";
        b.Accounts.Add(new() { Name = "B", Limits = new() { MaxConnections = 1 } });

        var changed = Assert.Single(OptionsComparer.Changed(a, b));
        Assert.Equal(OptionsComparer.Reloadability.Live, changed.Reloadability);
        Assert.Equal(["accounts"], OptionsComparer.Describe(changed, a, b));
    }
}
