package main

// The authorizer's decision table, role by API: every refusal has a positive control beside it (the same call
// allowed for the role, or the tenant, or the queue it is meant for), so a table that refused everything fails.

import (
	"context"
	"crypto/x509/pkix"
	"slices"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	deploymentpb "go.temporal.io/api/deployment/v1"
	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	querypb "go.temporal.io/api/query/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	updatepb "go.temporal.io/api/update/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/api"
	"go.temporal.io/server/common/authorization"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/types/known/durationpb"
)

const (
	wf = api.WorkflowServicePrefix
	op = api.OperatorServicePrefix
)

func exec(id string) *commonpb.WorkflowExecution { return &commonpb.WorkflowExecution{WorkflowId: id} }

func startReq(id, typ, queue string) *workflowservice.StartWorkflowExecutionRequest {
	return &workflowservice.StartWorkflowExecutionRequest{
		Namespace: "default", WorkflowId: id, WorkflowType: &commonpb.WorkflowType{Name: typ},
		TaskQueue: &taskqueuepb.TaskQueue{Name: queue},
	}
}

func startListedAs(id, tenant string) *workflowservice.StartWorkflowExecutionRequest {
	s := startReq(id, "agentRun", "ledgerloop")
	s.SearchAttributes = &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
		"LedgerloopTenant": {Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"` + tenant + `"`)},
	}}
	return s
}

func update(id, name string) *workflowservice.UpdateWorkflowExecutionRequest {
	return &workflowservice.UpdateWorkflowExecutionRequest{
		Namespace: "default", WorkflowExecution: exec(id),
		Request: &updatepb.Request{Input: &updatepb.Input{Name: name}},
	}
}

func query(id string) *workflowservice.QueryWorkflowRequest {
	return &workflowservice.QueryWorkflowRequest{Namespace: "default", Execution: exec(id), Query: &querypb.WorkflowQuery{QueryType: "ledger"}}
}

func describe(id string) *workflowservice.DescribeWorkflowExecutionRequest {
	return &workflowservice.DescribeWorkflowExecutionRequest{Namespace: "default", Execution: exec(id)}
}

func history(id string) *workflowservice.GetWorkflowExecutionHistoryRequest {
	return &workflowservice.GetWorkflowExecutionHistoryRequest{Namespace: "default", Execution: exec(id)}
}

func cancelReq(id string) *workflowservice.RequestCancelWorkflowExecutionRequest {
	return &workflowservice.RequestCancelWorkflowExecutionRequest{Namespace: "default", WorkflowExecution: exec(id)}
}

func terminate(id string) *workflowservice.TerminateWorkflowExecutionRequest {
	return &workflowservice.TerminateWorkflowExecutionRequest{Namespace: "default", WorkflowExecution: exec(id)}
}

func signal(id string) *workflowservice.SignalWorkflowExecutionRequest {
	return &workflowservice.SignalWorkflowExecutionRequest{Namespace: "default", WorkflowExecution: exec(id), SignalName: "x"}
}

func reset(id string) *workflowservice.ResetWorkflowExecutionRequest {
	return &workflowservice.ResetWorkflowExecutionRequest{Namespace: "default", WorkflowExecution: exec(id)}
}

func pollWF(queue string) *workflowservice.PollWorkflowTaskQueueRequest {
	return &workflowservice.PollWorkflowTaskQueueRequest{Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: queue}}
}

func pollSticky(sticky, normal string) *workflowservice.PollWorkflowTaskQueueRequest {
	return &workflowservice.PollWorkflowTaskQueueRequest{Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{
		Name: sticky, Kind: enumspb.TASK_QUEUE_KIND_STICKY, NormalName: normal,
	}}
}

func pollAct(queue string) *workflowservice.PollActivityTaskQueueRequest {
	return &workflowservice.PollActivityTaskQueueRequest{Namespace: "default", TaskQueue: &taskqueuepb.TaskQueue{Name: queue}}
}

func updateWithStart(s *workflowservice.StartWorkflowExecutionRequest, u *workflowservice.UpdateWorkflowExecutionRequest) *workflowservice.ExecuteMultiOperationRequest {
	return &workflowservice.ExecuteMultiOperationRequest{Namespace: "default", Operations: []*workflowservice.ExecuteMultiOperationRequest_Operation{
		{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: s}},
		{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_UpdateWorkflow{UpdateWorkflow: u}},
	}}
}

type who struct {
	roles  []string
	tenant string
}

var (
	anonymous    = (*who)(nil)
	noRole       = &who{tenant: "acme"}
	viewer       = &who{roles: []string{"viewer"}, tenant: "acme"}
	acmeStarter  = &who{roles: []string{"starter"}, tenant: "acme"}
	globexStart  = &who{roles: []string{"starter"}, tenant: "globex"}
	acmeApprover = &who{roles: []string{"approver"}, tenant: "acme"}
	acmeOperator = &who{roles: []string{"operator"}, tenant: "acme"}
	worker       = &who{roles: []string{"worker:ledgerloop"}, tenant: "system"}
	admin        = &who{roles: []string{"admin"}, tenant: "ops"}
	// A tenant whose prefix would reach the quota workflows, and one that would reach `acme:x`'s neighbours.
	quotaTenant  = &who{roles: []string{"starter"}, tenant: "ledgerloop-quota"}
	colonTenant  = &who{roles: []string{"starter"}, tenant: "acme:x"}
	anonViaTLS   = &who{tenant: ""}
	namespaceAPI = &workflowservice.DescribeNamespaceRequest{Namespace: "default"}
)

func claimsOf(w *who) *authorization.Claims {
	if w == nil {
		return nil
	}
	c := &caller{Principal: "p:" + w.tenant, Tenant: w.tenant, Roles: w.roles, Via: "token"}
	return &authorization.Claims{Subject: c.Principal, AuthType: authType, Extensions: c}
}

type call struct {
	api       string
	namespace string
	req       any
}

func on(apiName string, req any) call { return call{api: wf + apiName, namespace: "default", req: req} }

type row struct {
	name  string
	who   *who
	call  call
	allow bool
}

func decide(t *testing.T, w *who, c call) authorization.Result {
	t.Helper()
	a := newAuthorizer("default")
	res, err := a.Authorize(context.Background(), claimsOf(w), &authorization.CallTarget{APIName: c.api, Namespace: c.namespace, Request: c.req})
	if err != nil {
		t.Fatalf("Authorize returned an error: %v", err)
	}
	return res
}

func runTable(t *testing.T, rows []row) {
	t.Helper()
	allowed, denied := 0, 0
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			res := decide(t, r.who, r.call)
			got := res.Decision == authorization.DecisionAllow
			if got != r.allow {
				t.Fatalf("%s: allow=%v, want %v (reason %q)", r.call.api, got, r.allow, res.Reason)
			}
			if !got && res.Reason == "" {
				t.Fatalf("a refusal without a reason")
			}
		})
		if r.allow {
			allowed++
		} else {
			denied++
		}
	}
	if allowed == 0 || denied == 0 {
		t.Fatalf("a table needs both refusals and controls (allowed %d, denied %d)", allowed, denied)
	}
}

func TestNoTokenGetsHealthAndSystemInfoOnly(t *testing.T) {
	runTable(t, []row{
		{"health check", anonymous, call{api: "/grpc.health.v1.Health/Check"}, true},
		{"system info", anonymous, call{api: wf + "GetSystemInfo"}, true},
		{"describe namespace", anonymous, on("DescribeNamespace", namespaceAPI), false},
		{"list", anonymous, on("ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}), false},
		{"terminate", anonymous, on("TerminateWorkflowExecution", terminate("acme:r1")), false},
		{"cancel", anonymous, on("RequestCancelWorkflowExecution", cancelReq("acme:r1")), false},
		{"terminate the quota", anonymous, on("TerminateWorkflowExecution", terminate("ledgerloop-quota:acme")), false},
		{"start", anonymous, on("StartWorkflowExecution", startReq("acme:r1", "agentRun", "ledgerloop")), false},
		{"poll", anonymous, on("PollWorkflowTaskQueue", pollWF("ledgerloop")), false},
		// The same calls by the roles they are meant for: the controls.
		{"control: admin terminates", admin, on("TerminateWorkflowExecution", terminate("acme:r1")), true},
		{"control: viewer lists", viewer, on("ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}), true},
		// A verified token with no role, and a TLS client that is not the viewer: nothing but health.
		{"no role: describe", noRole, on("DescribeWorkflowExecution", describe("acme:r1")), false},
		{"no role: system info", noRole, call{api: wf + "GetSystemInfo"}, true},
		{"tls without a role: list", anonViaTLS, on("ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}), false},
	})
}

func TestOnlyAnAdminTerminatesResetsSignalsAndTouchesTheQuota(t *testing.T) {
	rows := []row{}
	for _, w := range []struct {
		name string
		who  *who
	}{{"viewer", viewer}, {"starter", acmeStarter}, {"approver", acmeApprover}, {"operator", acmeOperator}, {"worker", worker}} {
		rows = append(rows,
			row{w.name + " terminates", w.who, on("TerminateWorkflowExecution", terminate("acme:r1")), false},
			row{w.name + " resets", w.who, on("ResetWorkflowExecution", reset("acme:r1")), false},
			row{w.name + " signals", w.who, on("SignalWorkflowExecution", signal("acme:r1")), false},
			row{w.name + " terminates the quota", w.who, on("TerminateWorkflowExecution", terminate("ledgerloop-quota:acme")), false},
			row{w.name + " deletes", w.who, on("DeleteWorkflowExecution", &workflowservice.DeleteWorkflowExecutionRequest{Namespace: "default", WorkflowExecution: exec("acme:r1")}), false},
			row{w.name + " registers a namespace", w.who, on("RegisterNamespace", &workflowservice.RegisterNamespaceRequest{Namespace: "other"}), false},
			row{w.name + " adds a search attribute", w.who, call{api: op + "AddSearchAttributes", namespace: "default"}, false},
		)
	}
	for _, c := range []struct {
		name string
		call call
	}{
		{"terminates", on("TerminateWorkflowExecution", terminate("acme:r1"))},
		{"resets", on("ResetWorkflowExecution", reset("acme:r1"))},
		{"signals", on("SignalWorkflowExecution", signal("acme:r1"))},
		{"terminates the quota", on("TerminateWorkflowExecution", terminate("ledgerloop-quota:acme"))},
		{"updates the quota", on("UpdateWorkflowExecution", update("ledgerloop-quota:acme", "reserveQuota"))},
		{"adds a search attribute", call{api: op + "AddSearchAttributes", namespace: "default"}},
		{"calls the admin service", call{api: api.AdminServicePrefix + "DescribeCluster"}},
		{"uses another namespace", call{api: wf + "TerminateWorkflowExecution", namespace: "other", req: terminate("acme:r1")}},
	} {
		rows = append(rows, row{"control: admin " + c.name, admin, c.call, true})
	}
	runTable(t, rows)
}

func TestStartersStartAndUpdateTheirOwnTenantsRuns(t *testing.T) {
	runTable(t, []row{
		{"acme starts acme:", acmeStarter, on("StartWorkflowExecution", startReq("acme:run-1", "agentRun", "ledgerloop")), true},
		{"acme starts globex:", acmeStarter, on("StartWorkflowExecution", startReq("globex:run-1", "agentRun", "ledgerloop")), false},
		{"acme starts an id without a tenant", acmeStarter, on("StartWorkflowExecution", startReq("run-acme-1", "agentRun", "ledgerloop")), false},
		{"acme starts `acme:` alone", acmeStarter, on("StartWorkflowExecution", startReq("acme:", "agentRun", "ledgerloop")), false},
		{"acme starts a prefix-sharing tenant's id", acmeStarter, on("StartWorkflowExecution", startReq("acmecorp:run-1", "agentRun", "ledgerloop")), false},
		{"acme starts a quota workflow", acmeStarter, on("StartWorkflowExecution", startReq("ledgerloop-quota:acme", "tenantQuota", "ledgerloop")), false},
		{"acme starts another workflow type", acmeStarter, on("StartWorkflowExecution", startReq("acme:q", "tenantQuota", "ledgerloop")), false},
		{"acme starts listed under globex", acmeStarter, on("StartWorkflowExecution", startListedAs("acme:run-2", "globex")), false},
		{"control: acme starts listed under acme", acmeStarter, on("StartWorkflowExecution", startListedAs("acme:run-2", "acme")), true},
		{"acme starts eagerly", acmeStarter, on("StartWorkflowExecution", func() any {
			s := startReq("acme:run-3", "agentRun", "ledgerloop")
			s.RequestEagerExecution = true
			return s
		}()), false},
		{"acme updates acme:", acmeStarter, on("UpdateWorkflowExecution", update("acme:run-1", "requestCancel")), true},
		{"acme updates globex:", acmeStarter, on("UpdateWorkflowExecution", update("globex:run-1", "requestCancel")), false},
		{"control: globex updates globex:", globexStart, on("UpdateWorkflowExecution", update("globex:run-1", "requestCancel")), true},
		{"acme queries acme:", acmeStarter, on("QueryWorkflow", query("acme:run-1")), true},
		{"acme queries globex:", acmeStarter, on("QueryWorkflow", query("globex:run-1")), false},
		{"acme describes acme:", acmeStarter, on("DescribeWorkflowExecution", describe("acme:run-1")), true},
		{"acme reads globex: history", acmeStarter, on("GetWorkflowExecutionHistory", history("globex:run-1")), false},
		{"control: acme reads acme: history", acmeStarter, on("GetWorkflowExecutionHistory", history("acme:run-1")), true},
		{"acme cancels through Temporal", acmeStarter, on("RequestCancelWorkflowExecution", cancelReq("acme:run-1")), false},
		{"acme lists (a viewer's)", acmeStarter, on("ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}), false},
		{"acme polls", acmeStarter, on("PollWorkflowTaskQueue", pollWF("ledgerloop")), false},
		{"acme in another namespace", acmeStarter, call{api: wf + "StartWorkflowExecution", namespace: "other", req: startReq("acme:run-1", "agentRun", "ledgerloop")}, false},
		{"update-with-start of its own run", acmeStarter, on("ExecuteMultiOperation", updateWithStart(startReq("acme:run-4", "agentRun", "ledgerloop"), update("acme:run-4", "requestCancel"))), true},
		{"update-with-start reaching globex", acmeStarter, on("ExecuteMultiOperation", updateWithStart(startReq("acme:run-4", "agentRun", "ledgerloop"), update("globex:run-4", "requestCancel"))), false},
		// Tenant names that would forge a prefix get no tenant rights at all; their controls are acme's rows above.
		{"tenant ledgerloop-quota starts a quota id", quotaTenant, on("StartWorkflowExecution", startReq("ledgerloop-quota:acme", "agentRun", "ledgerloop")), false},
		{"tenant acme:x updates acme:x:run", colonTenant, on("UpdateWorkflowExecution", update("acme:x:run", "requestCancel")), false},
	})
}

func TestApproversApproveAndOperatorsResolveAndCancel(t *testing.T) {
	runTable(t, []row{
		{"approver decides", acmeApprover, on("UpdateWorkflowExecution", update("acme:run-1", "decideApproval")), true},
		{"approver decides for globex", acmeApprover, on("UpdateWorkflowExecution", update("globex:run-1", "decideApproval")), false},
		{"approver resolves", acmeApprover, on("UpdateWorkflowExecution", update("acme:run-1", "resolveCall")), false},
		{"approver cancels", acmeApprover, on("UpdateWorkflowExecution", update("acme:run-1", "requestCancel")), false},
		{"approver starts", acmeApprover, on("StartWorkflowExecution", startReq("acme:run-9", "agentRun", "ledgerloop")), false},
		{"approver queries pending approvals", acmeApprover, on("QueryWorkflow", query("acme:run-1")), true},
		{"operator resolves", acmeOperator, on("UpdateWorkflowExecution", update("acme:run-1", "resolveCall")), true},
		{"operator requests cancel (update)", acmeOperator, on("UpdateWorkflowExecution", update("acme:run-1", "requestCancel")), true},
		{"operator cancels through Temporal", acmeOperator, on("RequestCancelWorkflowExecution", cancelReq("acme:run-1")), true},
		{"operator cancels globex", acmeOperator, on("RequestCancelWorkflowExecution", cancelReq("globex:run-1")), false},
		{"operator approves", acmeOperator, on("UpdateWorkflowExecution", update("acme:run-1", "decideApproval")), false},
		{"operator terminates", acmeOperator, on("TerminateWorkflowExecution", terminate("acme:run-1")), false},
		{"operator cancels the quota", acmeOperator, on("RequestCancelWorkflowExecution", cancelReq("ledgerloop-quota:acme")), false},
	})
}

func TestViewersReadEverythingAndWriteNothing(t *testing.T) {
	runTable(t, []row{
		{"list", viewer, on("ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}), true},
		{"count", viewer, on("CountWorkflowExecutions", &workflowservice.CountWorkflowExecutionsRequest{Namespace: "default"}), true},
		{"describe another tenant's run", viewer, on("DescribeWorkflowExecution", describe("globex:run-1")), true},
		{"history", viewer, on("GetWorkflowExecutionHistory", history("globex:run-1")), true},
		{"query", viewer, on("QueryWorkflow", query("globex:run-1")), true},
		{"describe a task queue", viewer, on("DescribeTaskQueue", &workflowservice.DescribeTaskQueueRequest{Namespace: "default"}), true},
		{"list search attributes", viewer, call{api: op + "ListSearchAttributes", namespace: "default"}, true},
		{"start", viewer, on("StartWorkflowExecution", startReq("acme:run-1", "agentRun", "ledgerloop")), false},
		{"update", viewer, on("UpdateWorkflowExecution", update("acme:run-1", "decideApproval")), false},
		{"cancel", viewer, on("RequestCancelWorkflowExecution", cancelReq("acme:run-1")), false},
		{"batch", viewer, on("StartBatchOperation", &workflowservice.StartBatchOperationRequest{Namespace: "default"}), false},
		{"poll", viewer, on("PollActivityTaskQueue", pollAct("ledgerloop")), false},
		{"read another namespace", viewer, call{api: wf + "ListWorkflowExecutions", namespace: "other", req: &workflowservice.ListWorkflowExecutionsRequest{Namespace: "other"}}, false},
	})
}

func TestWorkersPollTheirOwnQueueAndRunTheQuota(t *testing.T) {
	runTable(t, []row{
		{"poll its workflow queue", worker, on("PollWorkflowTaskQueue", pollWF("ledgerloop")), true},
		{"poll its activity queue", worker, on("PollActivityTaskQueue", pollAct("ledgerloop")), true},
		{"poll its sticky queue", worker, on("PollWorkflowTaskQueue", pollSticky("host-1-abc", "ledgerloop")), true},
		{"poll another queue", worker, on("PollWorkflowTaskQueue", pollWF("payments")), false},
		{"poll another queue's activities", worker, on("PollActivityTaskQueue", pollAct("payments")), false},
		{"poll a sticky queue of another queue", worker, on("PollWorkflowTaskQueue", pollSticky("host-2-def", "payments")), false},
		{"poll with no queue", worker, on("PollWorkflowTaskQueue", &workflowservice.PollWorkflowTaskQueueRequest{Namespace: "default"}), false},
		{"complete a task", worker, on("RespondWorkflowTaskCompleted", &workflowservice.RespondWorkflowTaskCompletedRequest{Namespace: "default"}), true},
		{"heartbeat", worker, on("RecordActivityTaskHeartbeat", &workflowservice.RecordActivityTaskHeartbeatRequest{Namespace: "default"}), true},
		{"describe the namespace", worker, on("DescribeNamespace", namespaceAPI), true},
		{"reserve quota (update-with-start)", worker, on("ExecuteMultiOperation", updateWithStart(startReq("ledgerloop-quota:acme", "tenantQuota", "ledgerloop"), update("ledgerloop-quota:acme", "reserveQuota"))), true},
		{"release quota", worker, on("UpdateWorkflowExecution", update("ledgerloop-quota:acme", "releaseQuota")), true},
		{"start the quota on another queue", worker, on("StartWorkflowExecution", startReq("ledgerloop-quota:acme", "tenantQuota", "payments")), false},
		{"start a run", worker, on("StartWorkflowExecution", startReq("acme:run-1", "agentRun", "ledgerloop")), false},
		{"update a run", worker, on("UpdateWorkflowExecution", update("acme:run-1", "decideApproval")), false},
		{"terminate the quota", worker, on("TerminateWorkflowExecution", terminate("ledgerloop-quota:acme")), false},
		{"complete an activity by id", worker, on("RespondActivityTaskCompletedById", &workflowservice.RespondActivityTaskCompletedByIdRequest{Namespace: "default"}), false},
		{"list", worker, on("ListWorkflowExecutions", &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default"}), false},
	})
}

func TestTheServersOwnServicesPassAndForgedClaimsDoNot(t *testing.T) {
	a := newAuthorizer("default")
	target := &authorization.CallTarget{APIName: wf + "TerminateWorkflowExecution", Namespace: "default", Request: terminate("ledgerloop-quota:acme")}
	internal := &authorization.Claims{System: authorization.RoleAdmin, AuthType: authorization.InternalPrincipalType, Subject: authorization.InternalPrincipalName}
	res, _ := a.Authorize(context.Background(), internal, target)
	if res.Decision != authorization.DecisionAllow {
		t.Fatalf("the internal frontend's claims were refused: %q", res.Reason)
	}
	// Claims this mapper did not make (a system admin role from elsewhere) carry no caller: refused.
	foreign := &authorization.Claims{System: authorization.RoleAdmin, AuthType: "jwt", Subject: "someone"}
	res, _ = a.Authorize(context.Background(), foreign, target)
	if res.Decision == authorization.DecisionAllow {
		t.Fatalf("claims without a Ledgerloop caller were allowed")
	}
}

func TestARefusalNamesTheCallerAndTheCall(t *testing.T) {
	res := decide(t, acmeStarter, on("UpdateWorkflowExecution", update("globex:run-1", "requestCancel")))
	if res.Decision == authorization.DecisionAllow {
		t.Fatal("allowed")
	}
	for _, want := range []string{"p:acme", "starter", "tenant acme", "UpdateWorkflowExecution requestCancel on globex:run-1"} {
		if !strings.Contains(res.Reason, want) {
			t.Fatalf("reason %q does not name %q", res.Reason, want)
		}
	}
}

func TestTheViewerCertificateIsAViewerAndNothingMore(t *testing.T) {
	m := newClaimMapper(staticIssuers{}, "temporal-ui")
	ui, err := m.GetClaims(&authorization.AuthInfo{TLSSubject: &pkix.Name{CommonName: "temporal-ui"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.GetClaims(&authorization.AuthInfo{TLSSubject: &pkix.Name{CommonName: "ledgerloop-worker"}})
	if err != nil {
		t.Fatal(err)
	}
	a := newAuthorizer("default")
	list := &authorization.CallTarget{APIName: wf + "ListWorkflowExecutions", Namespace: "default"}
	term := &authorization.CallTarget{APIName: wf + "TerminateWorkflowExecution", Namespace: "default", Request: terminate("acme:r")}
	for _, c := range []struct {
		name   string
		claims *authorization.Claims
		target *authorization.CallTarget
		allow  bool
	}{
		{"the UI's certificate lists", ui, list, true},
		{"the UI's certificate terminates", ui, term, false},
		{"another certificate lists", other, list, false},
	} {
		res, _ := a.Authorize(context.Background(), c.claims, c.target)
		if (res.Decision == authorization.DecisionAllow) != c.allow {
			t.Fatalf("%s: decision %v, want allow=%v", c.name, res.Decision, c.allow)
		}
	}
}

// startWith: acme's run start with one option changed.
func startWith(id string, change func(*workflowservice.StartWorkflowExecutionRequest)) *workflowservice.StartWorkflowExecutionRequest {
	s := startReq(id, "agentRun", "ledgerloop")
	change(s)
	return s
}

func conflict(p enumspb.WorkflowIdConflictPolicy) func(*workflowservice.StartWorkflowExecutionRequest) {
	return func(s *workflowservice.StartWorkflowExecutionRequest) { s.WorkflowIdConflictPolicy = p }
}

func reuse(p enumspb.WorkflowIdReusePolicy) func(*workflowservice.StartWorkflowExecutionRequest) {
	return func(s *workflowservice.StartWorkflowExecutionRequest) { s.WorkflowIdReusePolicy = p }
}

func TestNoStartButAnAdminsTerminatesTheRunningExecution(t *testing.T) {
	const id = "acme:alice-run"
	rows := []row{
		{"conflict policy TERMINATE_EXISTING", acmeStarter, on("StartWorkflowExecution", startWith(id, conflict(enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING))), false},
		{"reuse policy TERMINATE_IF_RUNNING (conflict unspecified: the server makes it TERMINATE_EXISTING)", acmeStarter, on("StartWorkflowExecution", startWith(id, reuse(terminateIfRunning))), false},
		{"reuse policy TERMINATE_IF_RUNNING beside conflict FAIL", acmeStarter, on("StartWorkflowExecution", startWith(id, func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.WorkflowIdReusePolicy, s.WorkflowIdConflictPolicy = terminateIfRunning, enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL
		})), false},
		{"a conflict policy this authorizer does not know", acmeStarter, on("StartWorkflowExecution", startWith(id, conflict(enumspb.WorkflowIdConflictPolicy(99)))), false},
		{"a reuse policy this authorizer does not know", acmeStarter, on("StartWorkflowExecution", startWith(id, reuse(enumspb.WorkflowIdReusePolicy(99)))), false},
		{"a worker's quota start with TERMINATE_EXISTING", worker, on("StartWorkflowExecution", func() any {
			s := startReq("ledgerloop-quota:acme", "tenantQuota", "ledgerloop")
			s.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING
			return s
		}()), false},
		// The controls: the same start with a policy that cannot terminate, and the terminating ones by an admin.
		{"control: both policies unspecified (the server's defaults: FAIL, ALLOW_DUPLICATE)", acmeStarter, on("StartWorkflowExecution", startReq(id, "agentRun", "ledgerloop")), true},
		{"control: conflict policy FAIL", acmeStarter, on("StartWorkflowExecution", startWith(id, conflict(enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL))), true},
		{"control: conflict policy USE_EXISTING", acmeStarter, on("StartWorkflowExecution", startWith(id, conflict(enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING))), true},
		{"control: reuse policy REJECT_DUPLICATE", acmeStarter, on("StartWorkflowExecution", startWith(id, reuse(enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE))), true},
		{"control: reuse policy ALLOW_DUPLICATE", acmeStarter, on("StartWorkflowExecution", startWith(id, reuse(enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE))), true},
		{"control: reuse policy ALLOW_DUPLICATE_FAILED_ONLY", acmeStarter, on("StartWorkflowExecution", startWith(id, reuse(enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY))), true},
		{"control: admin, TERMINATE_EXISTING", admin, on("StartWorkflowExecution", startWith(id, conflict(enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING))), true},
		{"control: admin, TERMINATE_IF_RUNNING", admin, on("StartWorkflowExecution", startWith(id, reuse(terminateIfRunning))), true},
		{"control: a worker's quota start", worker, on("StartWorkflowExecution", startReq("ledgerloop-quota:acme", "tenantQuota", "ledgerloop")), true},
		// A request the authorizer cannot read as a start refuses (and panics nowhere).
		{"a start without a request", acmeStarter, on("StartWorkflowExecution", nil), false},
		{"a start carrying another API's request", acmeStarter, on("StartWorkflowExecution", update(id, "requestCancel")), false},
		{"an empty start request", acmeStarter, on("StartWorkflowExecution", (*workflowservice.StartWorkflowExecutionRequest)(nil)), false},
	}
	runTable(t, rows)
}

// Start options that make more than the one run asked for, act on the running execution under the id, hand the
// caller a task, or decide what the deployment decides: refused to anyone but an admin, each beside the same start
// without it (acme's starter) and with it (an admin).
func TestAStartOnlyMakesTheOneRunItAsksFor(t *testing.T) {
	const id = "acme:run-opt"
	options := []struct {
		name   string
		change func(*workflowservice.StartWorkflowExecutionRequest)
	}{
		{"a cron schedule", func(s *workflowservice.StartWorkflowExecutionRequest) { s.CronSchedule = "* * * * *" }},
		{"a retry policy", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.RetryPolicy = &commonpb.RetryPolicy{MaximumAttempts: 5}
		}},
		{"on-conflict options (USE_EXISTING attaching to the running run)", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.WorkflowIdConflictPolicy = enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING
			s.OnConflictOptions = &workflowpb.OnConflictOptions{AttachRequestId: true, AttachCompletionCallbacks: true, AttachLinks: true}
		}},
		{"empty on-conflict options", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.OnConflictOptions = &workflowpb.OnConflictOptions{}
		}},
		{"completion callbacks", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.CompletionCallbacks = []*commonpb.Callback{{Variant: &commonpb.Callback_Nexus_{Nexus: &commonpb.Callback_Nexus{Url: "http://127.0.0.1:1/cb"}}}}
		}},
		{"links", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.Links = []*commonpb.Link{{Variant: &commonpb.Link_WorkflowEvent_{WorkflowEvent: &commonpb.Link_WorkflowEvent{Namespace: "default", WorkflowId: "globex:run-1"}}}}
		}},
		{"eager execution", func(s *workflowservice.StartWorkflowExecutionRequest) { s.RequestEagerExecution = true }},
		{"eager worker deployment options", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.EagerWorkerDeploymentOptions = &deploymentpb.WorkerDeploymentOptions{DeploymentName: "ledgerloop"}
		}},
		{"a continued failure", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.ContinuedFailure = &failurepb.Failure{Message: "the last run failed"}
		}},
		{"a last completion result", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.LastCompletionResult = &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: []byte(`"done"`)}}}
		}},
		{"a versioning override", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.VersioningOverride = &workflowpb.VersioningOverride{Override: &workflowpb.VersioningOverride_AutoUpgrade{AutoUpgrade: true}}
		}},
		{"time skipping", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.TimeSkippingConfig = &commonpb.TimeSkippingConfig{Enabled: true}
		}},
		{"a priority", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.Priority = &commonpb.Priority{PriorityKey: 1, FairnessKey: "globex"}
		}},
		{"a field this server's API does not know", func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 999, protowire.VarintType), 1))
		}},
	}
	rows := []row{
		{"control: the start without any of them", acmeStarter, on("StartWorkflowExecution", startReq(id, "agentRun", "ledgerloop")), true},
		{"control: a start delay (it shapes only the new run)", acmeStarter, on("StartWorkflowExecution", startWith(id, func(s *workflowservice.StartWorkflowExecutionRequest) {
			s.WorkflowStartDelay = durationpb.New(1e9)
		})), true},
	}
	for _, o := range options {
		rows = append(rows,
			row{"starter: " + o.name, acmeStarter, on("StartWorkflowExecution", startWith(id, o.change)), false},
			row{"worker's quota start: " + o.name, worker, on("StartWorkflowExecution", func() any {
				s := startReq("ledgerloop-quota:acme", "tenantQuota", "ledgerloop")
				o.change(s)
				return s
			}()), false},
			row{"control: admin, " + o.name, admin, on("StartWorkflowExecution", startWith(id, o.change)), true},
		)
	}
	runTable(t, rows)
}

func TestUpdateWithStartFollowsTheStartRulesAndItsOneShape(t *testing.T) {
	const id = "acme:alice-run"
	startOp := func(s *workflowservice.StartWorkflowExecutionRequest) *workflowservice.ExecuteMultiOperationRequest_Operation {
		return &workflowservice.ExecuteMultiOperationRequest_Operation{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_StartWorkflow{StartWorkflow: s}}
	}
	updateOp := func(u *workflowservice.UpdateWorkflowExecutionRequest) *workflowservice.ExecuteMultiOperationRequest_Operation {
		return &workflowservice.ExecuteMultiOperationRequest_Operation{Operation: &workflowservice.ExecuteMultiOperationRequest_Operation_UpdateWorkflow{UpdateWorkflow: u}}
	}
	multi := func(ops ...*workflowservice.ExecuteMultiOperationRequest_Operation) *workflowservice.ExecuteMultiOperationRequest {
		return &workflowservice.ExecuteMultiOperationRequest{Namespace: "default", Operations: ops}
	}
	useExisting := startWith(id, conflict(enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING))
	runTable(t, []row{
		{"start TERMINATE_EXISTING + update", acmeStarter, on("ExecuteMultiOperation", updateWithStart(startWith(id, conflict(enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING)), update(id, "requestCancel"))), false},
		{"start TERMINATE_IF_RUNNING + update", acmeStarter, on("ExecuteMultiOperation", updateWithStart(startWith(id, reuse(terminateIfRunning)), update(id, "requestCancel"))), false},
		{"start with a cron schedule + update", acmeStarter, on("ExecuteMultiOperation", updateWithStart(startWith(id, func(s *workflowservice.StartWorkflowExecutionRequest) { s.CronSchedule = "@every 1m" }), update(id, "requestCancel"))), false},
		{"the update before the start", acmeStarter, on("ExecuteMultiOperation", multi(updateOp(update(id, "requestCancel")), startOp(useExisting))), false},
		{"a start alone", acmeStarter, on("ExecuteMultiOperation", multi(startOp(useExisting))), false},
		{"a start and two updates", acmeStarter, on("ExecuteMultiOperation", multi(startOp(useExisting), updateOp(update(id, "requestCancel")), updateOp(update(id, "requestCancel")))), false},
		{"the update on another run of the tenant", acmeStarter, on("ExecuteMultiOperation", updateWithStart(useExisting, update("acme:other-run", "requestCancel"))), false},
		{"an empty operation", acmeStarter, on("ExecuteMultiOperation", multi(startOp(useExisting), &workflowservice.ExecuteMultiOperationRequest_Operation{})), false},
		{"control: start USE_EXISTING + update (the update is the starter's anyway)", acmeStarter, on("ExecuteMultiOperation", updateWithStart(useExisting, update(id, "requestCancel"))), true},
		{"control: admin, start TERMINATE_EXISTING + update", admin, on("ExecuteMultiOperation", updateWithStart(startWith(id, conflict(enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING)), update(id, "requestCancel"))), true},
	})
}

// The other doors that start, reset or restart runs: every one is an admin's (a start by signal, a schedule, a
// batch, a reset, a standalone activity, new execution options).
func TestOtherStartsAndResetsAreAnAdminsOnly(t *testing.T) {
	const id = "acme:alice-run"
	doors := []struct {
		name string
		call call
	}{
		{"signal-with-start", on("SignalWithStartWorkflowExecution", &workflowservice.SignalWithStartWorkflowExecutionRequest{
			Namespace: "default", WorkflowId: id, WorkflowType: &commonpb.WorkflowType{Name: "agentRun"}, SignalName: "x",
			TaskQueue: &taskqueuepb.TaskQueue{Name: "ledgerloop"},
		})},
		{"a schedule", on("CreateSchedule", &workflowservice.CreateScheduleRequest{Namespace: "default", ScheduleId: "acme:every-minute"})},
		{"a schedule's update", on("UpdateSchedule", &workflowservice.UpdateScheduleRequest{Namespace: "default", ScheduleId: "acme:every-minute"})},
		{"a batch operation", on("StartBatchOperation", &workflowservice.StartBatchOperationRequest{Namespace: "default", VisibilityQuery: "WorkflowId = '" + id + "'"})},
		{"a reset", on("ResetWorkflowExecution", reset(id))},
		{"new execution options", on("UpdateWorkflowExecutionOptions", &workflowservice.UpdateWorkflowExecutionOptionsRequest{Namespace: "default", WorkflowExecution: exec(id)})},
		{"a standalone activity", on("StartActivityExecution", &workflowservice.StartActivityExecutionRequest{Namespace: "default", ActivityId: id})},
		{"a workflow rule", on("CreateWorkflowRule", &workflowservice.CreateWorkflowRuleRequest{Namespace: "default"})},
	}
	var rows []row
	for _, d := range doors {
		for _, w := range []struct {
			name string
			who  *who
		}{{"starter", acmeStarter}, {"approver", acmeApprover}, {"operator", acmeOperator}, {"worker", worker}, {"viewer", viewer}} {
			rows = append(rows, row{w.name + ": " + d.name, w.who, d.call, false})
		}
		rows = append(rows, row{"control: admin, " + d.name, admin, d.call, true})
	}
	runTable(t, rows)
}

func TestAStartRefusalNamesTheOptionAndWhy(t *testing.T) {
	for _, c := range []struct {
		req  *workflowservice.StartWorkflowExecutionRequest
		want []string
	}{
		{startWith("acme:r", conflict(enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING)), []string{"StartWorkflowExecution on acme:r", "TERMINATE_EXISTING", "terminate"}},
		{startWith("acme:r", reuse(terminateIfRunning)), []string{"TERMINATE_IF_RUNNING", "terminate"}},
		{startWith("acme:r", func(s *workflowservice.StartWorkflowExecutionRequest) { s.CronSchedule = "@hourly" }), []string{"cron_schedule"}},
	} {
		res := decide(t, acmeStarter, on("StartWorkflowExecution", c.req))
		if res.Decision == authorization.DecisionAllow {
			t.Fatalf("allowed: %v", c.req)
		}
		for _, w := range c.want {
			if !strings.Contains(res.Reason, w) {
				t.Fatalf("reason %q does not name %q", res.Reason, w)
			}
		}
	}
}

// Every field of this API's StartWorkflowExecutionRequest is classified exactly once, and every classified name is
// one of its fields: a go.mod bump that adds a start option fails here (and the option refuses until classified).
func TestEveryStartFieldIsClassified(t *testing.T) {
	fields := (&workflowservice.StartWorkflowExecutionRequest{}).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		name := fields.Get(i).Name()
		_, refused := startFieldsRefused[name]
		if shaping := slices.Contains(startFieldsShapingTheNewRun, name); shaping == refused {
			t.Errorf("field %s: shaping the new run %v, refused %v (exactly one, please)", name, shaping, refused)
		}
	}
	names := slices.Clone(startFieldsShapingTheNewRun)
	for name := range startFieldsRefused {
		names = append(names, name)
	}
	for _, name := range names {
		if fields.ByName(name) == nil {
			t.Errorf("%s is not a field of StartWorkflowExecutionRequest", name)
		}
	}
	if len(names) != fields.Len() {
		t.Errorf("%d names classified, %d fields", len(names), fields.Len())
	}
}
