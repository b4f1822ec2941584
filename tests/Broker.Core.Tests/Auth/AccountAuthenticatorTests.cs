using Broker.Core.Auth;
using Broker.Core.Internal.Auth;
using NATS.NKeys;

namespace Broker.Core.Tests.Auth;

/// <summary>Users of accounts, compiled beside <c>authorization.users</c>: each authenticates into its own account.</summary>
public sealed class AccountAuthenticatorTests
{
    private static readonly KeyPair Carol = KeyPair.CreatePair(PrefixByte.User);

    private static AccountOptions[] Accounts() =>
    [
        new()
        {
            Name = "A",
            Users = [new() { User = "a", Password = "pa" }, new() { User = "own", Password = "po", Permissions = new() { Publish = new() { Allow = ["own.>"] } } }],
            DefaultPermissions = new() { Publish = new() { Allow = ["a.>"] } },
        },
        new() { Name = "B", Users = [new() { User = "b", Password = "pb" }, new() { Nkey = Carol.GetPublicKey() }] },
        new() { Name = "Empty" },
    ];

    private static AuthorizationOptions Global() => new()
    {
        Users = [new() { User = "g", Password = "pg" }],
        DefaultPermissions = new() { Publish = new() { Allow = ["g.>"] } },
    };

    [Fact]
    public void Each_user_authenticates_into_its_own_account()
    {
        var auth = new Authenticator(Global(), Accounts());

        Assert.Equal("$G", auth.Authenticate("g", "pg", null)!.Account);
        Assert.Equal("A", auth.Authenticate("a", "pa", null)!.Account);
        Assert.Equal("B", auth.Authenticate("b", "pb", null)!.Account);
        Assert.Null(auth.Authenticate("a", "pb", null));
        Assert.Null(auth.Authenticate("nobody", "pa", null));

        // NKey users of an account too.
        var nonce = "nonce-to-sign"u8.ToArray();
        var signature = new byte[64];
        Carol.Sign(nonce, signature);
        var carol = auth.AuthenticateNkey(Carol.GetPublicKey(), Convert.ToBase64String(signature), nonce, out _);
        Assert.Equal("B", carol!.Account);
        Assert.Equal(Carol.GetPublicKey(), carol.Name);
    }

    [Fact]
    public void Account_default_permissions_apply_to_its_users_without_their_own_and_not_across_accounts()
    {
        var auth = new Authenticator(Global(), Accounts());

        var a = auth.Authenticate("a", "pa", null)!.Permissions!.CreateForConnection();
        Assert.True(a.CanPublish("a.x"u8));
        Assert.False(a.CanPublish("g.x"u8));

        var own = auth.Authenticate("own", "po", null)!.Permissions!.CreateForConnection();
        Assert.True(own.CanPublish("own.x"u8));
        Assert.False(own.CanPublish("a.x"u8));

        // authorization.default_permissions are $G's; B has none, so its users have full permissions.
        Assert.False(auth.Authenticate("g", "pg", null)!.Permissions!.CreateForConnection().CanPublish("a.x"u8));
        Assert.Null(auth.Authenticate("b", "pb", null)!.Permissions);
    }

    [Fact]
    public void Accounts_with_users_alone_require_authentication()
    {
        var auth = new Authenticator(new AuthorizationOptions(), Accounts());
        Assert.True(auth.AuthRequired);
        Assert.Null(auth.Authenticate(null, null, null));
        Assert.NotNull(auth.Authenticate("a", "pa", null));

        // Accounts without users ask nothing of clients: they land in $G.
        var open = new Authenticator(new AuthorizationOptions(), [new AccountOptions { Name = "Empty" }]);
        Assert.False(open.AuthRequired);
        Assert.Equal("$G", open.Authenticate(null, null, null)!.Account);
    }

    [Fact]
    public void No_auth_user_may_name_a_user_of_any_account()
    {
        var options = Global();
        options.NoAuthUser = "b";
        var auth = new Authenticator(options, Accounts());

        var bound = auth.Authenticate(null, null, null);
        Assert.Equal("b", bound!.Name);
        Assert.Equal("B", bound.Account);
    }

    [Fact]
    public void Account_of_a_user_follows_the_configuration()
    {
        var auth = new Authenticator(Global(), Accounts());
        Assert.Equal("A", auth.AccountOf("own"));
        Assert.Equal("B", auth.AccountOf(Carol.GetPublicKey()));
        Assert.Equal("$G", auth.AccountOf("g"));
        Assert.Null(auth.AccountOf("gone"));

        var single = new Authenticator(new AuthorizationOptions { User = "s", Password = "p" });
        Assert.Equal("$G", single.AccountOf("s"));
    }

    [Fact]
    public void Duplicate_user_across_accounts_is_refused()
    {
        var accounts = Accounts();
        accounts[1].Users.Add(new UserOptions { User = "a", Password = "x" });
        var error = Assert.Throws<InvalidOperationException>(() => new Authenticator(Global(), accounts));
        Assert.Equal("Duplicate user \"a\" detected", error.Message);
    }
}
