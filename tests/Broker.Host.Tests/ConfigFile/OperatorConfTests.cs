using Broker.Host.Configuration.ConfigFile;
using Broker.TestKit;
using NATS.NKeys;

namespace Broker.Host.Tests.ConfigFile;

/// <summary>
/// Operator mode in the configuration file, checked by nats-server 2.9.10 (<c>nats-server -t -c FILE</c>) and by our
/// host (<c>broker -t -c FILE</c>): valid files pass on both, and each broken one gets nats-server's text (the first
/// problem, at the same file:line:column when nats-server gives one). Every file starts with a comment line, as in
/// <see cref="ReferenceConfErrorTests"/>.
/// </summary>
public sealed class OperatorConfTests : IDisposable
{
    private static readonly TestOperator Op = CreateOperator();

    private readonly string directory = Directory.CreateTempSubdirectory("broker-operator-conf-").FullName;
    private readonly StringWriter output = new();
    private readonly StringWriter error = new();

    public void Dispose()
    {
        output.Dispose();
        error.Dispose();
        Directory.Delete(directory, recursive: true);
    }

    private static TestOperator CreateOperator()
    {
        var op = new TestOperator();
        op.CreateAccount();
        return op;
    }

    public static TheoryData<string> ValidFiles() => new()
    {
        Op.ConfigLines(),
        Op.ConfigLines().Replace("resolver: MEMORY", "resolver: mem", StringComparison.Ordinal),
        Op.ConfigLines() + $"system_account: {Op.SystemAccount.GetPublicKey()}\n",
        $"trusted_keys: [\"{Op.PublicKey}\"]\nresolver: MEMORY\n",
    };

    [Theory]
    [MemberData(nameof(ValidFiles))]
    public async Task Valid_files_pass_on_both(string body)
    {
        var file = Write(body);

        var reference = await CheckWithReferenceAsync(file);
        var ours = await CheckWithOursAsync(file);

        Assert.Equal((0, ""), (reference.ExitCode, reference.Problem));
        Assert.Equal((0, $"broker: configuration file {file} is valid"), ours);
    }

    [Fact]
    public async Task An_operator_jwt_file_decorated_as_nsc_writes_it_is_read()
    {
        var jwtFile = Path.Combine(directory, "op.jwt");
        await File.WriteAllTextAsync(jwtFile, "-----BEGIN TEST OPERATOR JWT-----\n" + Op.Jwt + "\n------END TEST OPERATOR JWT------\n");
        var file = Write(Op.ConfigLines().Replace($"\"{Op.Jwt}\"", $"\"{jwtFile}\"", StringComparison.Ordinal));

        Assert.Equal(0, (await CheckWithReferenceAsync(file)).ExitCode);
        Assert.Equal(0, (await CheckWithOursAsync(file)).ExitCode);
    }

    public static TheoryData<string> PositionedErrors() => new()
    {
        "operator: /nonexistent/op.jwt\nresolver: MEMORY",
        "operator: eyJhbGciOiJIUzI1NiJ9.e30\nresolver: MEMORY",
        "operators: [ a, b ]\nresolver: MEMORY",
        "resolver: BOGUS",
        "resolver: 1",
        "resolver_preload: 1",
        "resolver: MEMORY\nresolver_preload {\n  AABC: notajwt\n}",
        "resolver: MEMORY\nresolver_preload {\n  AABC: 1\n}",
        "trusted: OBAD\nresolver: MEMORY",
        "trusted_keys: [ 1 ]\nresolver: MEMORY",
        "trusted: 1",
    };

    [Theory]
    [MemberData(nameof(PositionedErrors))]
    public async Task Positioned_errors_match_nats_server(string body)
    {
        var file = Write(body);

        var reference = await CheckWithReferenceAsync(file);
        var ours = ConfMapper.MapFile(file, PluginBlocks.None).Diagnostics[0].ToString();

        Assert.Equal(1, reference.ExitCode);
        Assert.Equal(reference.Problem, ours);
    }

    public static TheoryData<string, string> TrustErrors() => new()
    {
        { Op.ConfigLines() + "accounts { A: {} }", "operators do not allow Accounts to be configured directly" },
        { Op.ConfigLines() + "authorization { users: [ {user: a, password: b} ] }", "operators do not allow users to be configured directly" },
        { Op.ConfigLines() + $"trusted: {Op.PublicKey}", "conflicting options for 'TrustedKeys' and 'TrustedOperators'" },
        { Op.ConfigLines() + $"system_account: {KeyPair.CreatePair(PrefixByte.Account).GetPublicKey()}", "system_account in config and operator JWT must be identical" },
    };

    /// <summary>
    /// nats-server finds these when it starts (<c>validateTrustedOperators</c>), not with <c>-t</c>; our <c>-t</c>
    /// validates the settings too, so it reports them there.
    /// </summary>
    [Theory]
    [MemberData(nameof(TrustErrors))]
    public async Task Trust_errors_match_nats_server_at_start(string body, string expected)
    {
        var file = Write("listen: \"127.0.0.1:-1\"\n" + body);

        var reference = await StartReferenceAsync(file);
        var ours = await CheckWithOursAsync(file);

        Assert.Equal((1, expected), reference);
        Assert.Equal((1, "broker: " + expected), ours);
    }

    /// <summary>
    /// nats-server 2.10's <c>validateTrustedOperators</c> (2.9.10 does not know <c>auth_callout</c>, so no comparison):
    /// operator mode takes its authorization callout from account JWTs only (nats-server's own test's file).
    /// </summary>
    [Fact]
    public async Task An_authorization_callout_in_the_file_is_refused_in_operator_mode()
    {
        var file = Write($"listen: \"127.0.0.1:-1\"\n{Op.ConfigLines()}authorization {{\n  auth_callout {{\n    issuer: \"ABJHLOVMPA4CI6R5KLNGOB4GSLNIY7IOUPAJC4YFNDLQVIOBYQGUWVLA\"\n    auth_users: [ auth ]\n  }}\n}}\n");

        var ours = await CheckWithOursAsync(file);

        Assert.Equal((1, "broker: operators do not allow authorization callouts to be configured directly"), ours);
    }

    /// <summary>
    /// An operator without a resolver: nats-server makes a URL resolver of the operator JWT's empty
    /// <c>account_server_url</c> and fails to fetch the system account from it (a Go HTTP error); we say what is missing.
    /// </summary>
    [Fact]
    public async Task An_operator_without_a_resolver_does_not_start()
    {
        var file = Write($"listen: \"127.0.0.1:-1\"\noperator: \"{Op.Jwt}\"");

        var reference = await StartReferenceAsync(file);
        var ours = await CheckWithOursAsync(file);

        Assert.Equal(1, reference.ExitCode);
        Assert.StartsWith("could not fetch <\"/accounts/\">", reference.Problem, StringComparison.Ordinal);
        Assert.Equal((1, "broker: operators require an account resolver to be configured"), ours);
    }

    [Theory]
    [InlineData("resolver: URL(\"http://localhost:9090/jwt/v1/accounts/\")", "\"resolver\": not supported (URL account resolvers")]
    public async Task Resolvers_not_built_are_refused_naming_what_is_missing(string resolver, string expected)
    {
        var file = Write($"operator: \"{Op.Jwt}\"\n{resolver}");

        var (exitCode, problem) = await CheckWithOursAsync(file);

        Assert.Equal(1, exitCode);
        Assert.StartsWith($"broker: {file}:3:1: {expected}", problem, StringComparison.Ordinal);
    }

    [Fact]
    public async Task An_account_jwt_with_service_latency_tracking_is_accepted()
    {
        var op = new TestOperator();
        op.CreateAccount(c => c.Nats.Exports =
            [new Core.Internal.Jwt.ExportClaim { Subject = "orders.>", Type = "service", Latency = new Core.Internal.Jwt.ServiceLatencyClaim { Results = "lat" } }]);
        var file = Write(op.ConfigLines());

        var (exitCode, problem) = await CheckWithOursAsync(file);

        Assert.True(exitCode == 0, problem);
    }

    [Fact]
    public void The_file_binds_to_the_operator_options()
    {
        var file = Write(Op.ConfigLines());
        var commandLine = Broker.Host.Configuration.CommandLine.Parse(["-c", file]);

        var settings = Broker.Host.Configuration.HostSettings.Bind(Broker.Host.Configuration.HostConfiguration.Build(directory, new Dictionary<string, string>(), commandLine.Settings, _ => PluginBlocks.None).Configuration);

        var options = settings.Broker.Operator;
        Assert.Equal([Op.Jwt], options.Operators);
        Assert.Equal(Core.Auth.AccountResolverType.Memory, options.Resolver);
        Assert.Equal(Op.AccountJwts.OrderBy(p => p.Key), options.ResolverPreload.OrderBy(p => p.Key));
        Assert.Equal(Op.SystemAccount.GetPublicKey(), Core.Internal.Accounts.AccountRegistry.SystemAccountName(settings.Broker));
    }

    private string Write(string body)
    {
        var file = Path.Combine(directory, $"check-{Guid.NewGuid():N}.conf");
        File.WriteAllText(file, "# checked by both servers\n" + body + "\n");
        return file;
    }

    private async Task<(int ExitCode, string Problem)> CheckWithOursAsync(string file)
    {
        var exitCode = await BrokerHost.RunAsync(["-t", "-c", file], new HostEnvironment(directory, new Dictionary<string, string>(), output, error));
        var text = error.ToString();
        error.GetStringBuilder().Clear();
        return (exitCode, text.Split('\n')[0].TrimEnd('\r'));
    }

    private static async Task<(int ExitCode, string Problem)> StartReferenceAsync(string file)
    {
        var binary = ReferenceServer.BinaryPath ?? throw new InvalidOperationException("nats-server (the Go reference) is not installed; ./scripts/test.sh installs it.");
        var result = await ExternalProcess.RunAsync(binary, ["-c", file], TimeSpan.FromSeconds(10));
        const string prefix = "nats-server: ";
        var first = result.ErrorText.Split('\n')[0].TrimEnd('\r');
        return (result.ExitCode ?? -1, first.StartsWith(prefix, StringComparison.Ordinal) ? first[prefix.Length..] : first);
    }

    // nats-server -t prints "nats-server: <problems, one per line>" on standard error and exits 1.
    private static async Task<(int ExitCode, string Problem)> CheckWithReferenceAsync(string file)
    {
        var binary = ReferenceServer.BinaryPath ?? throw new InvalidOperationException("nats-server (the Go reference) is not installed; ./scripts/test.sh installs it.");
        var result = await ExternalProcess.RunAsync(binary, ["-t", "-c", file], TimeSpan.FromSeconds(20));
        if (result.ExitCode == 0)
        {
            return (0, "");
        }

        const string prefix = "nats-server: ";
        var first = result.ErrorText.Split('\n')[0].TrimEnd('\r');
        return (result.ExitCode ?? -1, first.StartsWith(prefix, StringComparison.Ordinal) ? first[prefix.Length..] : first);
    }
}
